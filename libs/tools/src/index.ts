export { ToolRegistry } from './registry.ts';
export type { ToolDefinition } from './registry.ts';
export { ToolGate, capToolResult, MAX_TOOL_RESULT_CHARS } from './tool-gate.ts';
export type { CallErrorKind, CallOutcome, GateOptions, WaitRequest } from './tool-gate.ts';
export { BUILTIN_TOOLSETS, defaultToolsetFor, expandToolsets, resolveTools } from './toolsets.ts';
export type { ResolveInput, Toolset, ToolsetCatalog } from './toolsets.ts';
export { ToolExposure, toolPolicySchema } from './tool-policy.ts';
export type { ExposureInput, ToolPolicy } from './tool-policy.ts';
export { clarifyTool, CLARIFY_MAX_CHOICES } from './clarify-tool.ts';
export { defineTool } from './tool.ts';
export type { ApprovalNeed, CallContext, CallerRole, PersonAnswer, Tool, ToolContext } from './tool.ts';
export { todoTool, TODO_MAX_ITEMS, TODO_MAX_ITEM_CHARS } from './todo-tool.ts';
export { memoryTool, MEMORY_FAILURES_PER_TURN } from './memory-tool.ts';
export { skillsListTool, skillViewTool, skillManageTool, SKILL_TOOL_NAMES } from './skill-tools.ts';

import { ToolRegistry } from './registry.ts';
import { todoTool } from './todo-tool.ts';
import { memoryTool } from './memory-tool.ts';
import { clarifyTool } from './clarify-tool.ts';

/** The registry of built-in tools; later toolsets register theirs here. */
import { skillManageTool, skillsListTool, skillViewTool } from './skill-tools.ts';

/** The registry of built-in tools; later toolsets register theirs here. */
export function builtinRegistry(): ToolRegistry {
  return new ToolRegistry()
    .register(todoTool)
    .register(memoryTool)
    .register(skillsListTool)
    .register(skillViewTool)
    .register(skillManageTool)
    .register(clarifyTool);
}
