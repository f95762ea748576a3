import type { Config, Logger } from '@herald/core';
import { SETTING_NAMES } from '@herald/core';
import type { Db } from '@herald/db';
import { loadMcpFile, McpTools } from '@herald/mcp';
import type { ServerMap } from '@herald/mcp';
import type { SandboxChoice } from '@herald/tools';

/** HERALD_MCP_FILE validated now: a bad file stops the start with the field at fault (McpConfigError). */
export async function loadOperatorServers(config: Config): Promise<ServerMap> {
  return config.mcp.file === undefined ? {} : loadMcpFile(config.mcp.file, SETTING_NAMES);
}

/** The MCP tools of a process (a worker, or `herald mcp`), over the process's sandbox and environment. */
export async function openMcpTools(config: Config, db: Db, sandbox: SandboxChoice, logger?: Logger): Promise<McpTools> {
  const servers = await loadOperatorServers(config);
  if (config.mcp.file !== undefined) logger?.info({ mcpFile: config.mcp.file, servers: Object.keys(servers) }, 'MCP servers loaded');
  return new McpTools({
    db,
    config: config.mcp,
    servers,
    sandbox,
    env: process.env,
    networkToolsets: config.tools.sandbox.networkToolsets,
    webAllowlist: config.tools.webAllowlist,
    workspaceRoot: config.tools.workspaceRoot,
    logger,
  });
}
