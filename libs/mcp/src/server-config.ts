import { readFile } from 'node:fs/promises';
import { extname, isAbsolute } from 'node:path';
import { parse as parseYaml } from 'yaml';
import { z } from 'zod';

/** Names a server in tool names (`mcp_<server>_<tool>`) and toolsets (`mcp:<server>`). */
const serverName = z.string().regex(/^[A-Za-z0-9][A-Za-z0-9_-]{0,31}$/, { error: 'expected 1-32 letters, digits, _ or -' });
const variableName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]*$/, { error: 'expected an environment variable name' });
const headerName = z.string().regex(/^[A-Za-z0-9!#$%&'*+.^_`|~-]{1,100}$/, { error: 'expected an HTTP header name' });
const toolsetName = z.string().regex(/^[A-Za-z0-9_.:-]{1,64}$/, { error: 'expected a toolset name' });

/** Whether a server's tools wait for a person: `dangerous` = tools not marked read-only, or marked destructive. */
export const APPROVAL_MODES = ['never', 'dangerous', 'always'] as const;
export type ApprovalMode = (typeof APPROVAL_MODES)[number];

const common = {
  /** Bundles the server's toolset `mcp:<name>` joins; by default the one every chat bundle includes. */
  toolsets: z.array(toolsetName).max(20).default(['herald-core']),
  approval: z.enum(APPROVAL_MODES, { error: 'expected never, dangerous or always' }).default('dangerous'),
  timeout_ms: z.number().int().min(100).max(3_600_000).optional(),
};

const stdioServer = z.strictObject({
  command: z.string().trim().min(1).max(500),
  args: z.array(z.string().max(4000)).max(100).default([]),
  env_from: z.array(variableName).max(50).default([]),
  cwd: z.string().min(1).max(1000).optional(),
  ...common,
});

const httpUrl = z.string().refine(
  (value) => {
    try {
      return ['http:', 'https:'].includes(new URL(value).protocol);
    } catch {
      return false;
    }
  },
  { error: 'expected an http:// or https:// URL' },
);

const httpServer = z.strictObject({
  url: httpUrl,
  headers_from: z.record(headerName, variableName).default({}),
  /** streamable-http, the older HTTP+SSE, or auto: Streamable HTTP first, SSE when the server has only that. */
  transport: z.enum(['auto', 'streamable-http', 'sse'], { error: 'expected auto, streamable-http or sse' }).default('auto'),
  ...common,
});

/** The operator's file may also mark an HTTP server internal: its URL skips the SSRF rules. */
const operatorHttpServer = httpServer.extend({ internal: z.boolean().default(false) });

function serverEntry<S extends z.ZodType, H extends z.ZodType>(stdio: S, http: H) {
  // One message for an entry that is neither: naming the two shapes beats two unions' issues.
  return z.unknown().transform((value, ctx): z.output<S> | z.output<H> => {
    const isHttp = typeof value === 'object' && value !== null && 'url' in value;
    const parsed = (isHttp ? http : stdio).safeParse(value);
    if (parsed.success) return parsed.data as z.output<S> | z.output<H>;
    for (const issue of parsed.error.issues) ctx.addIssue({ ...issue, code: 'custom', message: issue.message, path: issue.path } as never);
    return z.NEVER;
  });
}

export const operatorServersSchema = z.strictObject({ servers: z.record(serverName, serverEntry(stdioServer, operatorHttpServer)).default({}) });
/** A profile's own servers (`PUT /v1/profiles/:p/mcp`): never internal. */
export const profileServersSchema = z
  .strictObject({ servers: z.record(serverName, serverEntry(stdioServer, httpServer)).default({}) })
  .refine((body) => Object.keys(body.servers).length <= 20, { error: 'at most 20 servers', path: ['servers'] });

export type StdioServerConfig = z.output<typeof stdioServer>;
export type HttpServerConfig = z.output<typeof httpServer> & { internal?: boolean };
export type ServerConfig = StdioServerConfig | HttpServerConfig;
export type ServerMap = Record<string, ServerConfig>;

export function isStdio(server: ServerConfig): server is StdioServerConfig {
  return 'command' in server;
}

/** Raised for a bad HERALD_MCP_FILE; the message names the field, never a secret's value (none is in the file). */
export class McpConfigError extends Error {
  override readonly name = 'McpConfigError';
}

function issueText(error: z.ZodError): string {
  return error.issues.map((issue) => `${issue.path.length > 0 ? issue.path.join('.') : '(file)'}: ${issue.message}`).join('; ');
}

/**
 * Variables whose values never reach a server: Herald's own settings (the same rule as
 * HERALD_SANDBOX_ENV). Checked for env_from and headers_from, in the file and in a profile.
 */
export function refusedVariables(servers: ServerMap, settingNames: readonly string[]): string[] {
  const problems: string[] = [];
  for (const [name, server] of Object.entries(servers)) {
    const variables = isStdio(server) ? server.env_from.map((v) => ['env_from', v]) : Object.entries(server.headers_from).map(([h, v]) => [`headers_from.${h}`, v]);
    for (const [field, variable] of variables) {
      if (variable !== undefined && (settingNames.includes(variable) || /^HERALD_/.test(variable))) {
        problems.push(`servers.${name}.${field}: ${variable} is a Herald setting, never passed to MCP servers`);
      }
    }
  }
  return problems;
}

/** HERALD_MCP_FILE parsed and validated; a problem stops the start, naming the field. */
export async function loadMcpFile(path: string, settingNames: readonly string[]): Promise<ServerMap> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new McpConfigError(`HERALD_MCP_FILE: cannot read ${path}: ${(error as Error).message}`);
  }
  let raw: unknown;
  try {
    raw = extname(path).toLowerCase() === '.json' ? JSON.parse(text) : parseYaml(text);
  } catch (error) {
    throw new McpConfigError(`HERALD_MCP_FILE: ${path} is not valid ${extname(path) === '.json' ? 'JSON' : 'YAML'}: ${(error as Error).message}`);
  }
  const parsed = operatorServersSchema.safeParse(raw ?? {});
  if (!parsed.success) throw new McpConfigError(`HERALD_MCP_FILE: ${issueText(parsed.error)}`);
  const refused = refusedVariables(parsed.data.servers, settingNames);
  if (refused.length > 0) throw new McpConfigError(`HERALD_MCP_FILE: ${refused.join('; ')}`);
  return parsed.data.servers;
}

/** Why a profile's servers may not be stored: a stdio command the operator did not allow, say. */
export function profileServerProblems(servers: ServerMap, allowedCommands: readonly string[], settingNames: readonly string[]): string[] {
  const problems = refusedVariables(servers, settingNames);
  for (const [name, server] of Object.entries(servers)) {
    if (isStdio(server) && !allowedCommands.includes(server.command)) {
      problems.push(`servers.${name}.command: ${server.command} is not in HERALD_MCP_ALLOWED_COMMANDS`);
    }
    // A profile's server works in its own directory: no way out of it through cwd.
    if (isStdio(server) && server.cwd !== undefined && (isAbsolute(server.cwd) || server.cwd.split(/[\\/]/).includes('..'))) {
      problems.push(`servers.${name}.cwd: expected a path inside the server's workspace (relative, no ..)`);
    }
  }
  return problems;
}
