import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { apiUserId } from '@herald/core';
import type { Config } from '@herald/core';
import { createDb } from '@herald/db';
import type { Db } from '@herald/db';
import type { DownServer } from '@herald/mcp';
import { BrowserSessions, openSandbox, ToolExposure, toolPolicySchema } from '@herald/tools';
import type { CallerRole, SandboxChoice, ToolRegistry } from '@herald/tools';
import { profileRecord, updateProfileSettings } from '@herald/profiles';
import { buildToolRegistry } from './tool-registry.ts';
import { usageError } from './setup-error.ts';

export const TOOLS_USAGE = `herald tools [--profile P] [--platform X] [--user ID] [--role chat|cron|review] [--no-mcp]
    the toolsets and the tools a session on that platform is offered (and, with --user, may run),
    the MCP servers' tools included (mcp_<server>_<tool>: each server is asked for its tools, as a
    worker does when a session starts; --no-mcp leaves them out and connects to nothing)
herald tools policy FILE [--profile P]
    set the profile's tool policy from a JSON file (see docs/tools.md, Toolsets and permissions)`;

/** Listing asks each server at most this long (a server's own timeout_ms wins): a worker may wait longer, a person should not. */
const LIST_TIMEOUT_MS = 10_000;

function fail(message: string): never {
  throw usageError(message, TOOLS_USAGE);
}

const out = (text: string) => process.stdout.write(`${text}\n`);

async function setPolicy(db: Db, profileId: string, file: string): Promise<void> {
  let raw: unknown;
  try {
    raw = JSON.parse(await readFile(file, 'utf8'));
  } catch (error) {
    fail(`${file}: ${(error as Error).message}`);
  }
  const parsed = toolPolicySchema.safeParse(raw);
  if (!parsed.success) {
    fail(parsed.error.issues.map((issue) => `${['tool_policy', ...issue.path].join('.')}: ${issue.message}`).join('\n'));
  }
  await updateProfileSettings(db, profileId, { tool_policy: parsed.data });
  out(`tool policy of ${profileId} updated`);
}

/** The profile's MCP servers' tools as a session starting now would get them (in a scratch workspace), and the servers that did not answer. */
async function mcpTools(config: Config, db: Db, sandbox: SandboxChoice, profileId: string, registry: ToolRegistry, exposure: ToolExposure) {
  const { openMcpTools } = await import('./mcp-wiring.ts');
  const mcp = await openMcpTools({ ...config, mcp: { ...config.mcp, timeoutMs: Math.min(config.mcp.timeoutMs, LIST_TIMEOUT_MS) } }, db, sandbox);
  const scratch = await mkdtemp(join(tmpdir(), 'herald-tools-'));
  try {
    const servers = Object.keys(await mcp.serversFor(profileId)).sort();
    const { tools, joins, down } = await mcp.discoverTools(profileId, scratch);
    const withMcp = registry.withTools(tools);
    return { servers, tools: tools.map((tool) => tool.name), down, registry: withMcp, exposure: exposure.withSessionTools(withMcp, joins) };
  } finally {
    await mcp.close();
    await rm(scratch, { recursive: true, force: true });
  }
}

function printMcp(listed: { servers: string[]; tools: string[]; down: DownServer[] } | null): void {
  if (listed === null) {
    out('MCP servers: not asked (--no-mcp); their tools: herald mcp list');
    return;
  }
  if (listed.servers.length === 0) return;
  const up = listed.servers.filter((server) => !listed.down.some((down) => down.server === server));
  out(`MCP servers: ${up.join(', ') || '(none answered)'}; ${listed.tools.length} tool${listed.tools.length === 1 ? '' : 's'} (mcp_<server>_<tool>)`);
  for (const { server, error } of listed.down) out(`MCP server ${server} did not answer (${error}): its tools are not offered until it does (herald mcp test ${server})`);
}

/** Operators' view of exposure: the same resolution the worker runs, printed. */
export async function runToolsCommand(argv: string[], config: Config): Promise<void> {
  const { values, positionals } = parseArgs({
    args: argv,
    options: {
      profile: { type: 'string', default: 'main' },
      platform: { type: 'string', default: 'api' },
      user: { type: 'string' },
      role: { type: 'string', default: 'chat' },
      'no-mcp': { type: 'boolean', default: false },
    },
    allowPositionals: true,
  });
  const role = values.role as CallerRole;
  if (!['chat', 'cron', 'review'].includes(role)) fail(`--role: expected chat, cron or review, got '${role}'`);
  const profileId = values.profile ?? 'main';
  const db = createDb({ url: config.database.url, maxConnections: 2 });
  try {
    const profile = await profileRecord(db, profileId);
    if (!profile) fail(`no profile '${profileId}'`);
    if (positionals[0] === 'policy') return await setPolicy(db, profileId, positionals[1] ?? fail('tools policy needs a JSON file'));
    if (positionals.length > 0) fail(`unknown tools subcommand '${positionals[0]}'`);
    const toolSandbox = await openSandbox({ settings: config.tools.sandbox, env: process.env, workspaceRoot: config.tools.workspaceRoot });
    // Listed, never run: delegate_task here has no queue to wake children on; the browser is never launched.
    const browser = new BrowserSessions({ chromiumPath: config.tools.chromiumPath, idleMs: config.tools.browserIdleMs, allowlist: config.tools.webAllowlist });
    const built = await buildToolRegistry(config, toolSandbox, () => Promise.reject(new Error('herald tools runs no tool')), { browser });
    let registry = built.registry;
    let exposure = new ToolExposure(registry, { pluginTools: built.pluginTools, env: process.env });
    const listed = values['no-mcp'] === true ? null : await mcpTools(config, db, toolSandbox, profileId, registry, exposure);
    if (listed !== null) ({ registry, exposure } = listed);
    const policy = toolPolicySchema.safeParse(profile.tool_policy);
    if (!policy.success) fail(`the stored tool policy of ${profileId} is invalid; workers offer only the 'safe' toolset`);
    const input = { policy: policy.data, platform: values.platform ?? 'api', role, userId: values.user === undefined ? undefined : apiUserId(values.user) };
    const { enabled, disabled } = exposure.toolsets(input);
    out(`profile ${profileId}, platform ${input.platform}, role ${role}${input.userId ? `, person ${input.userId}` : ''}`);
    out(`enabled toolsets:  ${enabled.join(', ') || '(none)'}`);
    out(`disabled toolsets: ${disabled.join(', ') || '(none)'}`);
    out(`tools: ${exposure.resolve(input).join(', ') || '(none)'}`);
    const missing = registry.names().filter((name) => !exposure.isAvailable(name));
    if (missing.length > 0) out(`not available here (requirements missing): ${missing.join(', ')}`);
    if (toolSandbox.notice !== null) out(`sandbox: ${toolSandbox.notice}`);
    printMcp(listed);
    out('\ntoolsets:');
    for (const [name, toolset] of Object.entries(exposure.catalog(policy.data))) {
      const parts = [...toolset.tools, ...toolset.includes.map((include) => `@${include}`)];
      out(`  ${name.padEnd(16)} ${parts.join(' ')}${toolset.description ? `  — ${toolset.description}` : ''}`);
    }
    for (const [toolset, names] of registry.byToolset()) if (toolset.startsWith('mcp:')) out(`  ${toolset.padEnd(16)} ${names.join(' ')}  — MCP server ${toolset.slice(4)}`);
  } finally {
    await db.destroy();
  }
}
