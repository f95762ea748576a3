import { z } from 'zod';
import type { Tool, ToolDefinition } from './tool.ts';

export type { ToolDefinition } from './tool.ts';

/**
 * What a model needs of a schema, and no more: string length bounds and the unbounded integer
 * maximum zod writes cost prompt tokens on every call and change nothing a model does; the
 * arguments are still checked against the full schema when the call runs (ToolGate).
 */
function forModels(schema: unknown): unknown {
  if (Array.isArray(schema)) return schema.map(forModels);
  if (typeof schema !== 'object' || schema === null) return schema;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(schema)) {
    if (key === 'maxLength' || key === 'minLength' || (key === 'maximum' && value === Number.MAX_SAFE_INTEGER)) continue;
    out[key] = key === 'properties' ? Object.fromEntries(Object.entries(value as Record<string, unknown>).map(([name, property]) => [name, forModels(property)])) : forModels(value);
  }
  return out;
}

/** Tool results longer than this are cut with a marker so one call cannot flood the context. */
export const MAX_TOOL_RESULT_CHARS = 50_000;

export function capToolResult(content: string, max = MAX_TOOL_RESULT_CHARS): string {
  if (content.length <= max) return content;
  return `${content.slice(0, max)}\n[truncated: ${content.length - max} more characters not shown]`;
}

/** Registration only: which tools a session sees is decided by ToolExposure, each call by ToolGate. */
export class ToolRegistry {
  readonly #tools = new Map<string, Tool>();
  // JSON Schema generation is the costly part of offering tools; tools never change once registered.
  readonly #definitions = new Map<string, ToolDefinition>();
  /** The registry this one extends (withTools): its tools and their cached definitions are shared. */
  readonly #base: ToolRegistry | undefined;

  constructor(base?: ToolRegistry) {
    this.#base = base;
  }

  /** This registry plus a session's own tools (its MCP tools); this one is left as it is. */
  withTools(tools: readonly Tool[]): ToolRegistry {
    const overlay = new ToolRegistry(this);
    for (const tool of tools) {
      if (this.get(tool.name)) throw new Error(`tool ${tool.name} is registered twice`);
      overlay.register(tool);
    }
    return overlay;
  }

  register(tool: Tool): this {
    if (this.#tools.has(tool.name)) throw new Error(`tool ${tool.name} is registered twice`);
    this.#tools.set(tool.name, tool);
    return this;
  }

  get(name: string): Tool | undefined {
    return this.#tools.get(name) ?? this.#base?.get(name);
  }

  names(): string[] {
    return [...new Set([...(this.#base?.names() ?? []), ...this.#tools.keys()])].sort();
  }

  /** Definitions sorted by name: a stable order keeps the provider's cached prefix stable. */
  definitions(names: readonly string[] = this.names()): ToolDefinition[] {
    return [...names]
      .sort()
      .map((name) => this.#definition(name))
      .filter((definition): definition is ToolDefinition => definition !== undefined);
  }

  #definition(name: string): ToolDefinition | undefined {
    const tool = this.#tools.get(name);
    if (!tool) return this.#base === undefined ? undefined : this.#base.#definition(name);
    let definition = this.#definitions.get(tool.name);
    if (!definition) {
      // A server's own JSON Schema (MCP) as it came, cleaned where it was read; a zod schema without the bounds models do not need.
      const { $schema: _ignored, ...parameters } = tool.parameters ?? (forModels(z.toJSONSchema(tool.schema, { io: 'input' })) as Record<string, unknown>);
      definition = { name: tool.name, description: tool.description, parameters };
      this.#definitions.set(tool.name, definition);
    }
    return definition;
  }

  /** Toolset name -> the registered tools declaring it, so plugin tools join toolsets by name. */
  byToolset(): Map<string, string[]> {
    const map = this.#base?.byToolset() ?? new Map<string, string[]>();
    for (const tool of this.#tools.values()) map.set(tool.toolset, [...(map.get(tool.toolset) ?? []), tool.name]);
    return map;
  }
}
