import { resolve } from 'node:path';
import { z } from 'zod';
import { commaList, integer, optionalText } from './fields.ts';

/** MCP servers' tools (docs/tools.md#mcp-servers). */
export interface McpConfig {
  /** The operator's MCP servers file (YAML or JSON), validated at start; none when unset. */
  file: string | undefined;
  /** Commands a profile's own stdio servers may run (`PUT /v1/profiles/:p/mcp`); none when empty. */
  allowedCommands: string[];
  /** A server process unused this long is stopped; the next call starts it again. */
  idleMs: number;
  /** A call's timeout when the server's entry sets none. */
  timeoutMs: number;
  /** Largest message a server may send; a bigger one ends the call and restarts the server. */
  maxMessageBytes: number;
}

export const mcpSection = z
  .object({
    HERALD_MCP_FILE: optionalText,
    HERALD_MCP_ALLOWED_COMMANDS: commaList,
    HERALD_MCP_IDLE_MS: integer(1000, 86_400_000).default(300_000),
    HERALD_MCP_TIMEOUT_MS: integer(100, 3_600_000).default(60_000),
    HERALD_MCP_MAX_MESSAGE_BYTES: integer(65_536, 1_073_741_824).default(8 * 1024 * 1024),
  })
  .transform((e): McpConfig => ({
    file: e.HERALD_MCP_FILE === undefined ? undefined : resolve(e.HERALD_MCP_FILE),
    allowedCommands: e.HERALD_MCP_ALLOWED_COMMANDS,
    idleMs: e.HERALD_MCP_IDLE_MS,
    timeoutMs: e.HERALD_MCP_TIMEOUT_MS,
    maxMessageBytes: e.HERALD_MCP_MAX_MESSAGE_BYTES,
  }));
