import type { Config } from '@herald/core';
import { BUILTIN_TOOLSETS, builtinRegistry, createDelegateTool, expandToolsets } from '@herald/tools';
import type { BackgroundProcesses, BrowserSessions, SandboxChoice, ToolRegistry } from '@herald/tools';
import { loadToolPlugins } from './role-wiring.ts';

/** Wakes the sessions a delegation created (the worker's run queue). */
export type WakeSessions = (sessionIds: string[]) => Promise<void>;

/**
 * Every tool the model can be offered: the built-ins, delegate_task and the plugin tools. The
 * worker runs them and `herald tools` lists them from this one function, so a tool added here
 * is offered and listed alike.
 */
export async function buildToolRegistry(
  config: Config,
  toolSandbox: SandboxChoice,
  wake: WakeSessions,
  /** The worker's background processes and browser contexts, which the process and browser tools act on. */
  extras: { backgroundProcesses?: BackgroundProcesses; browser?: BrowserSessions } = {},
): Promise<{ registry: ToolRegistry; pluginTools: string[] }> {
  const registry = builtinRegistry({ ...config.tools, toolSandbox, maxAttachmentBytes: config.attachments.maxBytes, ...extras });
  const pluginTools = await loadToolPlugins(registry, config.tools.plugins);
  registry.register(
    createDelegateTool({
      config: config.delegation,
      limits: config.people.quotas,
      expand: (toolsets) => [...expandToolsets(toolsets, BUILTIN_TOOLSETS, registry.byToolset()).tools],
      wake,
    }),
  );
  return { registry, pluginTools };
}
