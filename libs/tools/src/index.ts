export { ToolRegistry, capToolResult, MAX_TOOL_RESULT_CHARS } from './registry.ts';
export type { ToolDefinition, ToolOutcome } from './registry.ts';
export { defineTool } from './tool.ts';
export type { Tool, ToolContext } from './tool.ts';
export { todoTool, TODO_MAX_ITEMS, TODO_MAX_ITEM_CHARS } from './todo-tool.ts';
export { memoryTool, MEMORY_FAILURES_PER_TURN } from './memory-tool.ts';
export { sessionSearchTool } from './session-search-tool.ts';

import { ToolRegistry } from './registry.ts';
import { todoTool } from './todo-tool.ts';
import { memoryTool } from './memory-tool.ts';
import { sessionSearchTool } from './session-search-tool.ts';

/** The registry of built-in tools; later toolsets register theirs here. */
export function builtinRegistry(): ToolRegistry {
  return new ToolRegistry().register(todoTool).register(memoryTool).register(sessionSearchTool);
}
