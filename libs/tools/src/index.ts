// The built-in tools, one folder per family: shared/ (the tool contract, registry, toolsets, policy,
// the gate every call passes, tool search), files/, terminal/ (terminal and background processes),
// sandbox/ (bubblewrap, seccomp, the sandbox user), command-guard/ (dangerous-command detection and its
// shell lexer), web/ (search, extract, browser, SSRF guard), knowledge/ (memory, skills, session
// search, todo), delegation/ (subagents), cron/, chat/ (clarify, send_file). Importers use this index.
export { ToolRegistry } from './shared/registry.ts';
export type { ToolDefinition } from './shared/registry.ts';
export { ToolGate, capToolResult, MAX_TOOL_RESULT_CHARS } from './shared/tool-gate.ts';
export type { CallErrorKind, CallOutcome, GateOptions, WaitRequest } from './shared/tool-gate.ts';
export { BUILTIN_TOOLSETS, defaultToolsetFor, expandToolsets, resolveTools } from './shared/toolsets.ts';
export type { ResolveInput, Toolset, ToolsetCatalog } from './shared/toolsets.ts';
export { ToolExposure, toolPolicySchema } from './shared/tool-policy.ts';
export type { ExposureInput, ExposureOptions, ToolPolicy } from './shared/tool-policy.ts';
export { clarifyTool, CLARIFY_MAX_CHOICES } from './chat/clarify-tool.ts';
export { defineTool } from './shared/tool.ts';
export { toolSucceeded } from './shared/tool-result.ts';
export type { ApprovalNeed, CallContext, CallerRole, PersonAnswer, Tool, ToolContext } from './shared/tool.ts';
export { todoTool, TODO_MAX_ITEMS, TODO_MAX_ITEM_CHARS } from './knowledge/todo-tool.ts';
export { memoryTool, MEMORY_FAILURES_PER_TURN } from './knowledge/memory-tool.ts';
export { skillsListTool, skillViewTool, skillManageTool, SKILL_TOOL_NAMES } from './knowledge/skill-tools.ts';
export { fileTools, offeredFileTools, readFileTool, writeFileTool, patchTool, searchFilesTool } from './files/file-tools.ts';
export { resolveWorkspacePath, ensureWorkspace, WorkspacePathError } from './files/workspace-paths.ts';
export { openFileInside, writeWorkspaceFile } from './files/workspace-files.ts';
export { createTerminalTool } from './terminal/terminal-tool.ts';
export { openSandbox } from './sandbox/sandbox.ts';
export { spawnWithData } from './terminal/process-run.ts';
export type { SpawnSpec } from './terminal/process-run.ts';
export type { LaunchSpec, Sandbox, SandboxChoice, SandboxCommand, SandboxLaunch, SandboxOptions } from './sandbox/sandbox.ts';
export { sandboxEnv } from './sandbox/sandbox-env.ts';
export type { TerminalToolOptions } from './terminal/terminal-tool.ts';
export { checkCommand } from './command-guard/command-guard.ts';
export type { CommandCheck, GuardVerdict } from './command-guard/command-guard.ts';
export { createWebExtractTool } from './web/web-extract-tool.ts';
export type { WebExtractToolOptions } from './web/web-extract-tool.ts';
export { BackgroundProcesses, NOTICE_TAIL_CHARS, ProcessLimitError } from './terminal/background-processes.ts';
export type { BackgroundProcess, BackgroundProcessesOptions, ExitNotice } from './terminal/background-processes.ts';
export { createProcessTool, PROCESS_WAIT_MAX_S } from './terminal/process-tool.ts';
export { createToolSearchTool, estimateTokens, planToolOffer, TOOL_CALL, TOOL_SEARCH, toolCallTool } from './shared/tool-search.ts';
export type { ToolOffer } from './shared/tool-search.ts';
export { BrowserSessions, blockedUrl } from './web/browser-sessions.ts';
export type { BrowserSettings } from './web/browser-sessions.ts';
export { BROWSER_TOOL_NAMES, createBrowserTools } from './web/browser-tools.ts';
export { createWebSearchTool, searchWeb, WEB_SEARCH_MAX_RESULTS } from './web/web-search-tool.ts';
export type { SearchResult } from './web/web-search-tool.ts';
export { Allowlist, assertAddressAllowed, BlockedAddressError, blockedReason, pinnedLookup, resolveAllowed, systemLookup } from './web/ssrf.ts';
export type { LookupFunction } from './web/ssrf.ts';
export { pinnedRequest } from './web/pinned-request.ts';
export type { PinnedRequest } from './web/pinned-request.ts';
export { cronjobTool } from './cron/cronjob-tool.ts';
export { sessionSearchTool } from './knowledge/session-search-tool.ts';

import { ToolRegistry } from './shared/registry.ts';
import { todoTool } from './knowledge/todo-tool.ts';
import { memoryTool } from './knowledge/memory-tool.ts';
import { clarifyTool } from './chat/clarify-tool.ts';
import { skillManageTool, skillsListTool, skillViewTool } from './knowledge/skill-tools.ts';
import { offeredFileTools } from './files/file-tools.ts';
import type { SandboxChoice } from './sandbox/sandbox.ts';
import type { SandboxConfig } from '@herald/core';
import { createTerminalTool } from './terminal/terminal-tool.ts';
import { createWebExtractTool } from './web/web-extract-tool.ts';
import { createWebSearchTool } from './web/web-search-tool.ts';
import { createProcessTool } from './terminal/process-tool.ts';
import { createToolSearchTool, toolCallTool } from './shared/tool-search.ts';
import type { BrowserSessions } from './web/browser-sessions.ts';
import { createBrowserTools } from './web/browser-tools.ts';
import type { BackgroundProcesses } from './terminal/background-processes.ts';
import type { WebSearchConfig } from '@herald/core';
import { cronjobTool } from './cron/cronjob-tool.ts';
import { createSendFileTool } from './chat/send-file-tool.ts';
import { DEFAULT_ATTACHMENTS } from '@herald/core';
import { sessionSearchTool } from './knowledge/session-search-tool.ts';

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
export { createDelegateTool, DELEGATE_BLOCKED_TOOLS } from './delegation/delegate-tool.ts';
export type { DelegateToolOptions } from './delegation/delegate-tool.ts';
export { childResults, budgetSummary, SUMMARY_FLOOR_CHARS } from './delegation/delegate-report.ts';
export type { ChildResult } from './delegation/delegate-report.ts';
export { subagentPrompt } from './delegation/subagent-prompt.ts';
