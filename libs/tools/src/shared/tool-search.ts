import { z } from 'zod';
import type { ToolDefinition, ToolRegistry } from './registry.ts';
import { defineTool } from './tool.ts';
import type { Tool } from './tool.ts';
import { BUILTIN_TOOLSETS, expandToolsets } from './toolsets.ts';

export const TOOL_SEARCH = 'tool_search';
export const TOOL_CALL = 'tool_call';
const BRIDGE = [TOOL_CALL, TOOL_SEARCH];
const SEARCH_DEFAULT_LIMIT = 5;

/** Herald's core tools are always sent whole; everything else (browser, plugins, MCP) may be deferred. */
const CORE_TOOLS: ReadonlySet<string> = expandToolsets(['herald-core'], BUILTIN_TOOLSETS).tools;

/** Prompt tokens of tool definitions, estimated as the providers' tokenizers average on JSON: 4 characters each. */
export function estimateTokens(definitions: readonly ToolDefinition[]): number {
  return Math.ceil(JSON.stringify(definitions).length / 4);
}

/** What a session is offered when its tools would pass the schema budget: the sent ones, the looked-up ones. */
export interface ToolOffer {
  /** Every tool the session may call (deferred ones through tool_call, or by name once looked up). */
  offered: string[];
  /** The tools whose definitions go into every request. */
  sent: string[];
  deferred: string[];
}

/**
 * Hermes' Tool Search: when the offered tools' schemas would pass `budgetTokens`, the non-core
 * tools are left out of the request and reached through tool_search (look a tool up by need) and
 * tool_call (call it). Deterministic for a given set, so the session's cached prefix stays stable.
 */
export function planToolOffer(registry: ToolRegistry, offered: readonly string[], budgetTokens: number): ToolOffer {
  const own = offered.filter((name) => !BRIDGE.includes(name));
  const deferrable = own.filter((name) => !CORE_TOOLS.has(name));
  const bridged = BRIDGE.every((name) => registry.get(name) !== undefined);
  if (!bridged || deferrable.length === 0 || estimateTokens(registry.definitions(own)) <= budgetTokens) {
    return { offered: [...own], sent: [...own], deferred: [] };
  }
  const sent = [...own.filter((name) => CORE_TOOLS.has(name)), ...BRIDGE].sort();
  return { offered: [...own, ...BRIDGE].sort(), sent, deferred: [...deferrable].sort() };
}

function score(definition: ToolDefinition, words: readonly string[]): number {
  const name = definition.name.toLowerCase();
  const text = `${name} ${definition.description.toLowerCase()}`;
  return words.reduce((sum, word) => sum + (name.includes(word) ? 3 : 0) + (text.includes(word) ? 1 : 0), 0);
}

export function createToolSearchTool(registry: ToolRegistry): Tool {
  return defineTool({
    name: TOOL_SEARCH,
    toolset: 'tool_search',
    description: 'Find more tools by what you need (words like "browser click" or "payment"). Returns their schemas; call one with tool_call.',
    guidance: 'Only some tools are listed; tool_search finds the others, tool_call runs them.',
    schema: z.object({ query: z.string().trim().min(1).max(500), limit: z.number().int().min(1).max(20).optional() }),
    replaySafe: true,
    async execute(args, context) {
      const words = args.query
        .toLowerCase()
        .split(/[^a-z0-9_]+/)
        .filter((word) => word.length > 1);
      const candidates = (context.offered ?? []).filter((name) => !CORE_TOOLS.has(name) && !BRIDGE.includes(name));
      // The turn's registry when the gate gives it: the session's MCP tools live only there.
      const definitions = context.toolDefinitions?.(candidates) ?? registry.definitions(candidates);
      const found = definitions
        .map((definition) => ({ definition, score: score(definition, words) }))
        .filter((hit) => hit.score > 0)
        .sort((a, b) => b.score - a.score || a.definition.name.localeCompare(b.definition.name))
        .slice(0, args.limit ?? SEARCH_DEFAULT_LIMIT)
        .map((hit) => hit.definition);
      return JSON.stringify({ tools: found, how: found.length === 0 ? 'no tool matched; try other words' : 'call one with tool_call {name, arguments}' });
    },
  });
}

export const toolCallArgs = z.object({ name: z.string().min(1).max(128), arguments: z.record(z.string(), z.unknown()).default({}) });

/**
 * tool_call is never run itself: ToolGate unwraps it and runs the named tool with every check that
 * tool would get when called by name. Registered so it has a schema and counts as a tool.
 */
export const toolCallTool = defineTool({
  name: TOOL_CALL,
  toolset: 'tool_search',
  description: 'Call a tool that tool_search found: name and its arguments.',
  guidance: '',
  schema: toolCallArgs,
  replaySafe: false,
  execute() {
    return Promise.reject(new Error('tool_call runs through the tool gate'));
  },
});
