import { resolve } from 'node:path';
import { z } from 'zod';
import { commaList, integer } from './fields.ts';
import { sandboxConfig, sandboxSchema } from './sandbox.ts';
import type { SandboxConfig } from './sandbox.ts';
import { processesConfig, processesSchema } from './processes.ts';
import type { ProcessesConfig } from './processes.ts';
import { missingWebSearchSetting, webSearchConfig, webSearchSchema } from './web-search.ts';
import type { WebSearchConfig } from './web-search.ts';

/** What the agent's tools may reach and how long they may take; the names match builtinRegistry's options. */
export interface ToolsConfig {
  /** Module paths of plugin tools, loaded by workers and reviewers. */
  plugins: string[];
  /** Directory holding every session's workspace; shared by all workers (a ReadWriteMany volume on Kubernetes). */
  workspaceRoot: string;
  /** Longest a terminal command may run, and the cap on its output kept for the model. */
  terminalMaxTimeoutMs: number;
  terminalOutputChars: number;
  /** Hosts, IPs or CIDR ranges web fetches may reach even though they are loopback or private. */
  webAllowlist: string[];
  webMaxBytes: number;
  /** The search engine behind web_search (HERALD_WEB_SEARCH); null: web_search is not offered. */
  webSearch: WebSearchConfig;
  /** Background processes of the process tool (HERALD_PROCESS_*). */
  processes: ProcessesConfig;
  /** The browser tools' Chromium and how long a session's browser context stays open unused. */
  chromiumPath: string;
  browserIdleMs: number;
  /** Estimated prompt tokens of tool schemas past which non-core tools are reached through tool_search. */
  toolSchemaBudget: number;
  /** How long a pending approval or clarifying question waits for the person before it lapses. */
  approvalTimeoutMs: number;
  /** How terminal and file tools are confined; see SandboxConfig. */
  sandbox: SandboxConfig;
}

export const toolsSection = z
  .object({
    HERALD_TOOL_PLUGINS: commaList,
    HERALD_WORKSPACE_ROOT: z.string().trim().min(1, { error: 'expected a directory path' }).default('./data/workspaces'),
    HERALD_TERMINAL_MAX_TIMEOUT_MS: integer(1000, 3_600_000).default(600_000),
    HERALD_TERMINAL_OUTPUT_CHARS: integer(1000, 1_000_000).default(50_000),
    HERALD_WEB_ALLOWLIST: commaList,
    HERALD_WEB_MAX_BYTES: integer(1024, 100_000_000).default(2_000_000),
    HERALD_APPROVAL_TIMEOUT_MS: integer(1000, 86_400_000).default(300_000),
    HERALD_TOOL_SCHEMA_BUDGET: integer(500, 1_000_000).default(8000),
    HERALD_CHROMIUM_PATH: z.string().trim().min(1, { error: 'expected a file path' }).default('/usr/bin/chromium'),
    HERALD_BROWSER_IDLE_MS: integer(1000, 86_400_000).default(300_000),
    ...sandboxSchema,
    ...webSearchSchema,
    ...processesSchema,
  })
  .superRefine((e, context) => {
    const missing = missingWebSearchSetting(e);
    if (missing !== null) context.addIssue({ code: 'custom', path: [missing], message: `required when HERALD_WEB_SEARCH is ${e.HERALD_WEB_SEARCH}` });
  })
  .transform((e): ToolsConfig => ({
    plugins: e.HERALD_TOOL_PLUGINS,
    workspaceRoot: resolve(e.HERALD_WORKSPACE_ROOT),
    terminalMaxTimeoutMs: e.HERALD_TERMINAL_MAX_TIMEOUT_MS,
    terminalOutputChars: e.HERALD_TERMINAL_OUTPUT_CHARS,
    webAllowlist: e.HERALD_WEB_ALLOWLIST,
    webMaxBytes: e.HERALD_WEB_MAX_BYTES,
    approvalTimeoutMs: e.HERALD_APPROVAL_TIMEOUT_MS,
    toolSchemaBudget: e.HERALD_TOOL_SCHEMA_BUDGET,
    chromiumPath: e.HERALD_CHROMIUM_PATH,
    browserIdleMs: e.HERALD_BROWSER_IDLE_MS,
    sandbox: sandboxConfig(e),
    webSearch: webSearchConfig(e),
    processes: processesConfig(e),
  }));
