import type { Tool as McpTool } from '@modelcontextprotocol/sdk/types.js';
import { promptSafe } from '@herald/knowledge';
import type { Db } from '@herald/db';
import { cleanInputSchema } from './json-schema.ts';
import type { ApprovalMode, ServerConfig } from './server-config.ts';
import { mcpToolNames } from './tool-names.ts';

/** One MCP tool as a session was offered it: fixed for the session's life (session_mcp_tools). */
export interface FrozenTool {
  /** The name the model calls (`mcp_<server>_<tool>`, shortened when needed). */
  name: string;
  server: string;
  /** The tool's own name on its server. */
  tool: string;
  description: string;
  parameters: Record<string, unknown>;
  readOnly: boolean;
  destructive: boolean;
  approval: ApprovalMode;
  /** Bundles the server's toolset joined when the session began. */
  toolsets: string[];
}

const MAX_DESCRIPTION = 4000;

/** A tool description as it may enter the prompt: scanned, and replaced by a plain one if it carries an injection. */
function safeDescription(server: string, tool: McpTool): string {
  const text = (tool.description ?? tool.title ?? '').slice(0, MAX_DESCRIPTION);
  const checked = promptSafe(text);
  if (checked === text) return text === '' ? `Tool ${tool.name} of the MCP server ${server}.` : text;
  return `Tool ${tool.name} of the MCP server ${server}. Its own description was withheld: ${checked}`;
}

/** A server's listed tools as frozen entries; `taken` holds names already used (no collisions). */
export function freezeTools(server: string, config: ServerConfig, tools: readonly McpTool[], taken: Set<string>): FrozenTool[] {
  const names = mcpToolNames(
    server,
    tools.map((tool) => tool.name),
    taken,
  );
  return tools.map((tool) => {
    const name = names.get(tool.name) as string;
    taken.add(name);
    const readOnly = tool.annotations?.readOnlyHint === true;
    return {
      name,
      server,
      tool: tool.name,
      description: safeDescription(server, tool),
      parameters: cleanInputSchema(tool.inputSchema),
      readOnly,
      // The spec's default: a tool that is not read-only may be destructive unless it says otherwise.
      destructive: !readOnly && tool.annotations?.destructiveHint !== false,
      approval: config.approval,
      toolsets: config.toolsets,
    };
  });
}

export async function loadFrozenTools(db: Db, sessionId: string): Promise<FrozenTool[] | undefined> {
  const row = await db.selectFrom('session_mcp_tools').select('tools').where('session_id', '=', sessionId).executeTakeFirst();
  return row ? (row.tools as FrozenTool[]) : undefined;
}

/** Stores a session's list once; when two workers race, the first list wins and both use it. */
export async function storeFrozenTools(db: Db, sessionId: string, tools: FrozenTool[]): Promise<FrozenTool[]> {
  await db
    .insertInto('session_mcp_tools')
    .values({ session_id: sessionId, tools: JSON.stringify(tools) })
    .onConflict((oc) => oc.column('session_id').doNothing())
    .execute();
  return (await loadFrozenTools(db, sessionId)) ?? tools;
}
