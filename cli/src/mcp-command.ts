import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import type { Config } from '@herald/core';
import { createDb } from '@herald/db';
import { isStdio, mcpToolNames } from '@herald/mcp';
import type { McpTools, ServerConfig } from '@herald/mcp';
import { openSandbox } from '@herald/tools';
import { openMcpTools } from './mcp-wiring.ts';

export const MCP_USAGE = `herald mcp list [--profile P] [--json]
    each MCP server (HERALD_MCP_FILE and the profile's own), whether it answers, and its tools
herald mcp test NAME [--profile P] [--json]
    connect to one server and list its tools; exits 1 when it does not answer`;

function fail(message: string): never {
  process.stderr.write(`herald: ${message}\n\n${MCP_USAGE}\n`);
  process.exit(2);
}

interface ServerReport {
  name: string;
  source: 'file' | 'profile';
  transport: 'stdio' | 'http';
  state: 'up' | 'down';
  error?: string;
  tools: Array<{ name: string; tool: string; description: string }>;
}

async function probe(mcp: McpTools, profileId: string, name: string, server: ServerConfig, source: ServerReport['source']): Promise<ServerReport> {
  const base = { name, source, transport: isStdio(server) ? ('stdio' as const) : ('http' as const) };
  const scratch = await mkdtemp(join(tmpdir(), 'herald-mcp-'));
  try {
    const listed = await mcp.listTools(profileId, name, server, scratch);
    const names = mcpToolNames(
      name,
      listed.map((tool) => tool.name),
    );
    const tools = listed.map((tool) => ({ name: names.get(tool.name) ?? tool.name, tool: tool.name, description: (tool.description ?? '').split('\n')[0]?.slice(0, 100) ?? '' }));
    return { ...base, state: 'up', tools };
  } catch (error) {
    return { ...base, state: 'down', error: (error as Error).message, tools: [] };
  } finally {
    await rm(scratch, { recursive: true, force: true });
  }
}

function print(reports: ServerReport[]): void {
  const out = (text: string) => process.stdout.write(`${text}\n`);
  if (reports.length === 0) out('no MCP servers configured (HERALD_MCP_FILE, PUT /v1/profiles/:p/mcp)');
  for (const report of reports) {
    const state = report.state === 'up' ? `up, ${report.tools.length} tool${report.tools.length === 1 ? '' : 's'}` : `down: ${report.error}`;
    out(`${report.name}  (${report.transport}, ${report.source})  ${state}`);
    for (const tool of report.tools) out(`  ${tool.name.padEnd(40)} ${tool.description}`);
  }
}

/** `herald mcp list|test`: connects from this process, as a worker would, and lists tools. */
export async function runMcpCommand(argv: string[], config: Config): Promise<void> {
  const { values, positionals } = parseArgs({ args: argv, options: { profile: { type: 'string', default: 'main' }, json: { type: 'boolean', default: false } }, allowPositionals: true });
  const [sub, target] = positionals;
  if (sub !== 'list' && sub !== 'test') fail(sub === undefined ? 'mcp needs list or test' : `unknown mcp subcommand '${sub}'`);
  if (sub === 'test' && target === undefined) fail('mcp test needs a server name');
  const profileId = values.profile ?? 'main';
  const db = createDb({ url: config.database.url, maxConnections: 2 });
  const sandbox = await openSandbox({ settings: config.tools.sandbox, env: process.env });
  let mcp: McpTools | undefined;
  try {
    mcp = await openMcpTools(config, db, sandbox);
    const servers = await mcp.serversFor(profileId);
    const names = Object.keys(servers)
      .filter((name) => sub === 'list' || name === target)
      .sort();
    if (sub === 'test' && names.length === 0) fail(`no MCP server '${target}' for profile ${profileId}`);
    const reports: ServerReport[] = [];
    for (const name of names) reports.push(await probe(mcp, profileId, name, servers[name] as ServerConfig, mcp.isOperatorServer(name) ? 'file' : 'profile'));
    if (values.json) process.stdout.write(`${JSON.stringify({ servers: reports }, null, 2)}\n`);
    else print(reports);
    if (sub === 'test' && reports.some((report) => report.state === 'down')) process.exitCode = 1;
  } finally {
    await mcp?.close();
    await db.destroy();
  }
}
