import { z } from 'zod';
import { isConnectionError, LeaseLostError } from '@herald/session';
import type { Tool, ToolContext } from './tool.ts';

export interface ToolDefinition {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

export interface ToolOutcome {
  content: string;
  isError: boolean;
}

/** Tool results longer than this are cut with a marker so one call cannot flood the context. */
export const MAX_TOOL_RESULT_CHARS = 50_000;

export function capToolResult(content: string, max = MAX_TOOL_RESULT_CHARS): string {
  if (content.length <= max) return content;
  return `${content.slice(0, max)}\n[truncated: ${content.length - max} more characters not shown]`;
}

function formatIssues(error: z.ZodError): string {
  return error.issues
    .map((issue) => `${issue.path.length > 0 ? issue.path.join('.') : '(arguments)'}: ${issue.message}`)
    .join('; ');
}

/** Registration only; which tools a session sees is decided by the caller's list of names. */
export class ToolRegistry {
  readonly #tools = new Map<string, Tool>();
  // JSON Schema generation is the costly part of offering tools; tools never change once registered.
  readonly #definitions = new Map<string, ToolDefinition>();

  register(tool: Tool): this {
    if (this.#tools.has(tool.name)) throw new Error(`tool ${tool.name} is registered twice`);
    this.#tools.set(tool.name, tool);
    return this;
  }

  get(name: string): Tool | undefined {
    return this.#tools.get(name);
  }

  names(): string[] {
    return [...this.#tools.keys()].sort();
  }

  /** Definitions sorted by name: a stable order keeps the provider's cached prefix stable. */
  definitions(names: readonly string[] = this.names()): ToolDefinition[] {
    return [...names]
      .sort()
      .map((name) => this.#tools.get(name))
      .filter((tool): tool is Tool => tool !== undefined)
      .map((tool) => {
        let definition = this.#definitions.get(tool.name);
        if (!definition) {
          const { $schema: _ignored, ...parameters } = z.toJSONSchema(tool.schema, { io: 'input' }) as Record<string, unknown>;
          definition = { name: tool.name, description: tool.description, parameters };
          this.#definitions.set(tool.name, definition);
        }
        return definition;
      });
  }

  /**
   * Validates and runs one call. Never throws for the model's mistakes: unknown tools, bad JSON and
   * invalid arguments come back as error results the model can read and correct.
   */
  async execute(
    call: { name: string; arguments: string },
    allowed: readonly string[],
    context: ToolContext,
  ): Promise<ToolOutcome> {
    const tool = allowed.includes(call.name) ? this.#tools.get(call.name) : undefined;
    if (!tool) {
      return {
        isError: true,
        content: `Tool '${call.name}' does not exist. Available tools: ${[...allowed].sort().join(', ')}`,
      };
    }
    let raw: unknown;
    try {
      raw = call.arguments.trim() === '' ? {} : JSON.parse(call.arguments);
    } catch (error) {
      return {
        isError: true,
        content: `Invalid arguments for tool '${call.name}': not valid JSON (${(error as Error).message}). Send a JSON object.`,
      };
    }
    const parsed = tool.schema.safeParse(raw);
    if (!parsed.success) {
      return { isError: true, content: `Invalid arguments for tool '${call.name}': ${formatIssues(parsed.error)}` };
    }
    let content: string;
    try {
      content = await tool.execute(parsed.data, context);
    } catch (error) {
      // Losing the lease, an abort or a storage outage ends the turn; anything else is the tool's
      // failure, which the model should see and work around.
      if (context.signal.aborted || LeaseLostError.isInstance(error) || isConnectionError(error)) throw error;
      return { isError: true, content: `Tool '${call.name}' failed: ${(error as Error)?.message ?? String(error)}` };
    }
    return { isError: false, content: capToolResult(content) };
  }
}
