import { z } from 'zod';
import { apiUserId } from '@herald/core';
import { BUILTIN_TOOLSETS, defaultToolsetFor, resolveTools } from './toolsets.ts';
import type { Toolset, ToolsetCatalog } from './toolsets.ts';
import type { CallerRole } from './tool.ts';
import type { ToolRegistry } from './registry.ts';

// `:` for the toolsets of MCP servers (`mcp:<server>`).
const toolsetName = z.string().regex(/^[A-Za-z0-9_*.:-]{1,64}$/, { error: 'expected a toolset name (letters, digits, _ . : -)' });
const nameList = z.array(toolsetName).max(100);
const scope = z.strictObject({ enabled: nameList.optional(), disabled: nameList.optional() });

/**
 * A profile's tool policy, stored as JSON on the profile. `enabled` replaces the platform's default
 * bundle; per-platform `enabled` replaces both; every `disabled` list applies, last.
 */
export const toolPolicySchema = z.strictObject({
  enabled: nameList.optional(),
  disabled: nameList.optional(),
  platforms: z.record(z.string().min(1).max(64), scope).optional(),
  users: z.record(z.string().min(1).max(256), z.strictObject({ disabled: nameList })).optional(),
  toolsets: z.record(toolsetName, z.strictObject({ description: z.string().max(500).default(''), tools: z.array(z.string()).max(200).default([]), includes: nameList.default([]) })).optional(),
});

export type ToolPolicy = z.infer<typeof toolPolicySchema>;

/** What a role may never use, whatever the policy enables. */
const ROLE_DISABLED: Record<CallerRole, readonly string[]> = {
  chat: [],
  // Nobody is there to answer, and a scheduled run does not schedule more runs.
  cron: ['clarify', 'cronjob'],
  review: [],
  // A child of delegate_task: nobody to ask, no long-term memory, no jobs (Hermes'
  // DELEGATE_BLOCKED_TOOLS; delegate_task itself is left out of the child's tools unless it may
  // orchestrate, and Herald has no send_message tool). Applied last, like every disabled list.
  subagent: ['clarify', 'memory', 'cronjob'],
};

/**
 * The `users` entry of a person. Keys are written as the API takes user ids (`u1` is `api:u1`,
 * `telegram:42` is Telegram's person 42), so the key and the caller's qualified id are compared
 * after the same qualification.
 */
function personEntry(policy: ToolPolicy, userId: string): { disabled: string[] } | undefined {
  const key = Object.keys(policy.users ?? {}).find((name) => apiUserId(name) === userId);
  return key === undefined ? undefined : policy.users?.[key];
}

export interface ExposureOptions {
  pluginTools?: readonly string[];
  env?: Readonly<Record<string, string | undefined>>;
  /** Bundle name -> toolsets it includes besides its own (an MCP server joining `herald-core`, say). */
  joins?: Readonly<Record<string, readonly string[]>>;
}

export interface ExposureInput {
  policy: ToolPolicy;
  platform: string;
  role: CallerRole;
  /** The person calling; their `users` entry narrows the set. Omitted: the session-wide set. */
  userId?: string | undefined;
  /** A scheduled job's own toolsets replace the enabled ones for its runs. */
  jobToolsets?: readonly string[] | undefined;
}

/**
 * Resolves which tools are exposed, from the registry (what exists), a profile's policy and the
 * caller. One function for offering tools and for checking each call again when it runs.
 */
export class ToolExposure {
  readonly #registry: ToolRegistry;
  readonly #pluginTools: readonly string[];
  readonly #env: Readonly<Record<string, string | undefined>>;
  readonly #joins: Readonly<Record<string, readonly string[]>>;

  constructor(registry: ToolRegistry, options: ExposureOptions = {}) {
    this.#registry = registry;
    this.#pluginTools = options.pluginTools ?? [];
    this.#env = options.env ?? {};
    this.#joins = options.joins ?? {};
  }

  /** The same policy over a session's registry (its MCP tools added), with their toolsets' joins. */
  withSessionTools(registry: ToolRegistry, joins: Readonly<Record<string, readonly string[]>>): ToolExposure {
    return new ToolExposure(registry, { pluginTools: this.#pluginTools, env: this.#env, joins });
  }

  catalog(policy: ToolPolicy): ToolsetCatalog {
    const catalog: Record<string, Toolset> = { ...(policy.toolsets ?? {}), ...BUILTIN_TOOLSETS };
    // A session's own toolsets join bundles by name (an MCP server's `toolsets`): the built-in
    // bundle is copied with the extra includes, never changed.
    for (const [bundle, includes] of Object.entries(this.#joins)) {
      const base = Object.hasOwn(catalog, bundle) ? catalog[bundle] : undefined;
      catalog[bundle] = { description: base?.description ?? '', tools: base?.tools ?? [], includes: [...(base?.includes ?? []), ...includes] };
    }
    return catalog;
  }

  /** The toolsets in effect: enabled (before expansion) and disabled. */
  toolsets(input: ExposureInput): { enabled: string[]; disabled: string[] } {
    const { policy, platform, role } = input;
    const platformScope = policy.platforms?.[platform];
    let enabled: string[];
    if (role === 'review') enabled = ['herald-review'];
    else if (input.jobToolsets && input.jobToolsets.length > 0) enabled = [...input.jobToolsets];
    else enabled = platformScope?.enabled ?? policy.enabled ?? [defaultToolsetFor(role === 'cron' ? 'cron' : platform, this.catalog(policy))];
    const disabled = [
      ...(policy.disabled ?? []),
      ...(platformScope?.disabled ?? []),
      ...(input.userId === undefined ? [] : (personEntry(policy, input.userId)?.disabled ?? [])),
      ...ROLE_DISABLED[role],
    ];
    return { enabled, disabled };
  }

  resolve(input: ExposureInput): string[] {
    const { enabled, disabled } = this.toolsets(input);
    return resolveTools({
      enabled,
      disabled,
      catalog: this.catalog(input.policy),
      registered: this.#registry.byToolset(),
      pluginTools: input.role === 'review' ? [] : this.#pluginTools,
      isAvailable: (name) => this.isAvailable(name),
    });
  }

  isAvailable(name: string): boolean {
    const tool = this.#registry.get(name);
    if (!tool || tool.unavailable !== undefined) return false;
    return (tool.requiresEnv ?? []).every((variable) => (this.#env[variable] ?? '') !== '');
  }
}
