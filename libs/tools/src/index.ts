export { ToolRegistry } from './registry.ts';
export type { ToolDefinition } from './registry.ts';
export { ToolGate, capToolResult, MAX_TOOL_RESULT_CHARS } from './tool-gate.ts';
export type { CallErrorKind, CallOutcome, GateOptions, WaitRequest } from './tool-gate.ts';
export { BUILTIN_TOOLSETS, defaultToolsetFor, expandToolsets, resolveTools } from './toolsets.ts';
export type { ResolveInput, Toolset, ToolsetCatalog } from './toolsets.ts';
export { ToolExposure, toolPolicySchema } from './tool-policy.ts';
export type { ExposureInput, ExposureOptions, ToolPolicy } from './tool-policy.ts';
export { clarifyTool, CLARIFY_MAX_CHOICES } from './clarify-tool.ts';
export { defineTool } from './tool.ts';
export { toolSucceeded } from './tool-result.ts';
export type { ApprovalNeed, CallContext, CallerRole, PersonAnswer, Tool, ToolContext } from './tool.ts';
export { todoTool, TODO_MAX_ITEMS, TODO_MAX_ITEM_CHARS } from './todo-tool.ts';
export { memoryTool, MEMORY_FAILURES_PER_TURN } from './memory-tool.ts';
export { skillsListTool, skillViewTool, skillManageTool, SKILL_TOOL_NAMES } from './skill-tools.ts';
export { fileTools, offeredFileTools, readFileTool, writeFileTool, patchTool, searchFilesTool } from './file-tools.ts';
export { resolveWorkspacePath, ensureWorkspace, WorkspacePathError } from './workspace-paths.ts';
export { openFileInside, writeWorkspaceFile } from './workspace-files.ts';
export { createTerminalTool } from './terminal-tool.ts';
export { openSandbox } from './sandbox.ts';
export { spawnWithData } from './process-run.ts';
export type { SpawnSpec } from './process-run.ts';
export type { LaunchSpec, Sandbox, SandboxChoice, SandboxCommand, SandboxLaunch, SandboxOptions } from './sandbox.ts';
export { sandboxEnv } from './sandbox-env.ts';
export type { TerminalToolOptions } from './terminal-tool.ts';
export { checkCommand } from './command-guard.ts';
export type { CommandCheck, GuardVerdict } from './command-guard.ts';
export { createWebExtractTool } from './web-extract-tool.ts';
export type { WebExtractToolOptions } from './web-extract-tool.ts';
export { BackgroundProcesses, NOTICE_TAIL_CHARS, ProcessLimitError } from './background-processes.ts';
export type { BackgroundProcess, BackgroundProcessesOptions, ExitNotice } from './background-processes.ts';
export { createProcessTool, PROCESS_WAIT_MAX_S } from './process-tool.ts';
export { createToolSearchTool, estimateTokens, planToolOffer, TOOL_CALL, TOOL_SEARCH, toolCallTool } from './tool-search.ts';
export type { ToolOffer } from './tool-search.ts';
export { BrowserSessions, blockedUrl } from './browser-sessions.ts';
export type { BrowserSettings } from './browser-sessions.ts';
export { BROWSER_TOOL_NAMES, createBrowserTools } from './browser-tools.ts';
export { createWebSearchTool, searchWeb, WEB_SEARCH_MAX_RESULTS } from './web-search-tool.ts';
export type { SearchResult } from './web-search-tool.ts';
export { Allowlist, assertAddressAllowed, BlockedAddressError, blockedReason, pinnedLookup, resolveAllowed, systemLookup } from './ssrf.ts';
export type { LookupFunction } from './ssrf.ts';
export { pinnedRequest } from './pinned-request.ts';
export type { PinnedRequest } from './pinned-request.ts';
export { cronjobTool } from './cronjob-tool.ts';
export { sessionSearchTool } from './session-search-tool.ts';

import { ToolRegistry } from './registry.ts';
import { todoTool } from './todo-tool.ts';
import { memoryTool } from './memory-tool.ts';
import { clarifyTool } from './clarify-tool.ts';
import { skillManageTool, skillsListTool, skillViewTool } from './skill-tools.ts';
import { offeredFileTools } from './file-tools.ts';
import type { SandboxChoice } from './sandbox.ts';
import type { SandboxConfig } from '@herald/core';
import { createTerminalTool } from './terminal-tool.ts';
import { createWebExtractTool } from './web-extract-tool.ts';
import { createWebSearchTool } from './web-search-tool.ts';
import { createProcessTool } from './process-tool.ts';
import { createToolSearchTool, toolCallTool } from './tool-search.ts';
import type { BrowserSessions } from './browser-sessions.ts';
import { createBrowserTools } from './browser-tools.ts';
import type { BackgroundProcesses } from './background-processes.ts';
import type { WebSearchConfig } from '@herald/core';
import { cronjobTool } from './cronjob-tool.ts';
import { createSendFileTool } from './send-file-tool.ts';
import { DEFAULT_ATTACHMENTS } from '@herald/core';
import { sessionSearchTool } from './session-search-tool.ts';

/** Settings of the configurable built-in tools; the names match the fields of the Herald config. */
export interface BuiltinToolOptions {
  terminalMaxTimeoutMs?: number;
  terminalOutputChars?: number;
  /** Where terminal commands run (openSandbox); without one, terminal and file tools are not offered. */
  toolSandbox?: SandboxChoice;
  /** From the config: which toolsets' commands get the network. */
  sandbox?: Pick<SandboxConfig, 'networkToolsets' | 'userNamespaceToolsets'>;
  webAllowlist?: readonly string[];
  webMaxBytes?: number;
  /** The engine behind web_search; without one the tool is registered but never offered. */
  webSearch?: WebSearchConfig;
  /** The worker's background processes; without them (reviewers, the CLI) `process` is not offered. */
  backgroundProcesses?: BackgroundProcesses | null;
  /** The worker's browser; without it the browser tools are not registered. */
  browser?: BrowserSessions | null;
  /** Largest file send_file sends (HERALD_MAX_ATTACHMENT_MB); without it, the default. */
  maxAttachmentBytes?: number;
}

/** The registry of built-in tools; which of them a session sees is the tool policy's business. */
export function builtinRegistry(options: BuiltinToolOptions = {}): ToolRegistry {
  const registry = new ToolRegistry()
    .register(todoTool)
    .register(memoryTool)
    .register(skillsListTool)
    .register(skillViewTool)
    .register(skillManageTool)
    .register(clarifyTool)
    .register(cronjobTool)
    .register(sessionSearchTool);
  const choice = options.toolSandbox ?? { sandbox: null, notice: 'no sandbox was opened for this process' };
  const unavailable = choice.sandbox === null ? choice.notice : undefined;
  for (const tool of offeredFileTools(choice.sandbox, unavailable)) registry.register(tool);
  registry.register(
    createTerminalTool({
      sandbox: choice.sandbox,
      unavailable,
      network: options.sandbox?.networkToolsets.includes('terminal') ?? false,
      userNamespaces: options.sandbox?.userNamespaceToolsets.includes('terminal') ?? false,
      maxTimeoutMs: options.terminalMaxTimeoutMs,
      outputChars: options.terminalOutputChars,
      processes: options.backgroundProcesses ?? null,
    }),
  );
  registry.register(
    createProcessTool({
      sandbox: choice.sandbox,
      unavailable,
      network: options.sandbox?.networkToolsets.includes('terminal') ?? false,
      processes: options.backgroundProcesses ?? null,
    }),
  );
  registry.register(createWebExtractTool({ allowlist: options.webAllowlist, maxBytes: options.webMaxBytes }));
  registry.register(createSendFileTool({ maxBytes: options.maxAttachmentBytes ?? DEFAULT_ATTACHMENTS.maxBytes }));
  registry.register(createWebSearchTool(options.webSearch ?? null));
  // The search step for sessions whose tools pass the schema budget (planToolOffer).
  registry.register(createToolSearchTool(registry)).register(toolCallTool);
  for (const tool of options.browser ? createBrowserTools(options.browser) : []) registry.register(tool);
  return registry;
}
export { createDelegateTool, DELEGATE_BLOCKED_TOOLS } from './delegate-tool.ts';
export type { DelegateToolOptions } from './delegate-tool.ts';
export { childResults, budgetSummary, SUMMARY_FLOOR_CHARS } from './delegate-report.ts';
export type { ChildResult } from './delegate-report.ts';
export { subagentPrompt } from './subagent-prompt.ts';
