import type { FastifyInstance } from 'fastify';
import { SETTING_NAMES } from '@herald/core';
import { withAudit } from '@herald/audit';
import type { Db } from '@herald/db';
import { isStdio, loadProfileServers, profileServerProblems, profileServersSchema, saveProfileServers } from '@herald/mcp';
import { sendError } from './api-errors.ts';
import { firstIssue } from './message-body.ts';
import { profileExists } from './profile-exists.ts';
import { withContract } from './contracts/route-contract.ts';
import { anyJson, profileParams } from './contracts/common.ts';
import { z } from 'zod';

/** A profile's own servers as stored: names to their settings (variables named, never their values). */
const serversView = z.object({ servers: z.record(z.string(), anyJson) });

/**
 * A profile's own MCP servers (`GET`/`PUT /v1/profiles/:profile/mcp`), guarded as the other
 * profile settings routes are (the API token). A stdio command must be one the operator allowed
 * in HERALD_MCP_ALLOWED_COMMANDS; secrets are named by variable, never stored. A change reaches
 * sessions that start after it: a running session keeps the tools it began with.
 */
export function registerMcpRoutes(app: FastifyInstance, db: Db, options: { allowedCommands: readonly string[] }): void {
  app.get<{ Params: { profile: string } }>(
    '/v1/profiles/:profile/mcp',
    withContract({ summary: "A profile's own MCP servers", tags: ['profiles'], params: profileParams, response: { 200: serversView } }),
    async (request, reply) => {
      if (!(await profileExists(db, request.params.profile))) return sendError(reply, 404, 'not_found', 'no such profile');
      return { servers: await loadProfileServers(db, request.params.profile) };
    },
  );

  const putContract = {
    summary: "Set a profile's own MCP servers (stdio commands from HERALD_MCP_ALLOWED_COMMANDS only)",
    tags: ['profiles'],
    params: profileParams,
    body: profileServersSchema,
    response: { 200: serversView },
  };
  app.put<{ Params: { profile: string } }>('/v1/profiles/:profile/mcp', withContract(putContract), async (request, reply) => {
    const parsed = profileServersSchema.safeParse(request.body ?? {});
    if (!parsed.success) {
      const issue = firstIssue(parsed.error);
      return sendError(reply, 400, 'invalid_request', issue.message, issue.field);
    }
    const servers = parsed.data.servers;
    const problem = profileServerProblems(servers, options.allowedCommands, SETTING_NAMES)[0];
    if (problem !== undefined) return sendError(reply, 400, 'invalid_request', problem, problem.split(':')[0]);
    const profileId = request.params.profile;
    if (!(await profileExists(db, profileId))) return sendError(reply, 404, 'not_found', 'no such profile');
    await withAudit(db, async (trx) => {
      await saveProfileServers(trx, profileId, servers);
      const detail = {
        servers: Object.entries(servers).map(([name, server]) => ({ name, kind: isStdio(server) ? 'stdio' : 'http', ...(isStdio(server) ? { command: server.command } : { url: server.url }) })),
      };
      return { result: undefined, audit: { kind: 'admin_change', actor: 'api', profileId, subject: `mcp:${profileId}`, detail } };
    });
    return { servers };
  });
}
