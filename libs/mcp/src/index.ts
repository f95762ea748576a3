export { APPROVAL_MODES, isStdio, loadMcpFile, McpConfigError, operatorServersSchema, profileServerProblems, profileServersSchema } from './server-config.ts';
export type { ApprovalMode, HttpServerConfig, ServerConfig, ServerMap, StdioServerConfig } from './server-config.ts';
export { McpTools, WORKSPACE_PLACEHOLDER } from './mcp-tools.ts';
export type { DownServer, McpToolsOptions, SessionTools } from './mcp-tools.ts';
export { loadProfileServers, saveProfileServers } from './profile-servers.ts';
export { cleanInputSchema } from './json-schema.ts';
export { mcpToolNames, MAX_TOOL_NAME } from './tool-names.ts';
export { resultText } from './call-result.ts';
export type { FrozenTool } from './frozen-tools.ts';
