import { z } from 'zod';
import { integer, optionalText } from './fields.ts';
import { endpointFor, modelName } from './model.ts';
import type { ModelEndpoint } from './model.ts';

/** delegate_task's limits (docs/subagents.md); the defaults are Hermes' `delegation:` defaults. */
export interface DelegationConfig {
  /** How deep delegation nests: 1 means children cannot delegate (Hermes' max_spawn_depth). */
  maxSpawnDepth: number;
  /** Tasks one call may start, and background children one session may have running at once. */
  maxConcurrentChildren: number;
  /** Each child's own budget of model calls (Hermes' delegation.max_iterations). */
  maxIterations: number;
  /** Whether role "orchestrator" keeps delegate_task for a child above the depth limit. */
  orchestratorEnabled: boolean;
  /** The most characters of one call's child reports handed back to the parent (shared by the batch). */
  maxSummaryChars: number;
  /** provider/model of the children; undefined: the main model. */
  model: ModelEndpoint | undefined;
}

const flag = z.enum(['true', 'false', '1', '0'], { error: 'expected true or false' }).transform((v) => v === 'true' || v === '1');

const delegationEnv = z.object({
  HERALD_DELEGATION_MAX_SPAWN_DEPTH: integer(1, 10).default(1),
  HERALD_DELEGATION_MAX_CONCURRENT_CHILDREN: integer(1, 100).default(3),
  HERALD_DELEGATION_MAX_ITERATIONS: integer(1, 1000).default(50),
  HERALD_DELEGATION_ORCHESTRATOR_ENABLED: flag.default(true),
  HERALD_DELEGATION_MAX_SUMMARY_CHARS: integer(2000, 1_000_000).default(24_000),
  HERALD_DELEGATION_MODEL: modelName,
  // Children reach their provider with the model section's key and base URL.
  OPENAI_API_KEY: optionalText,
  OPENAI_BASE_URL: optionalText,
  ANTHROPIC_API_KEY: optionalText,
  ANTHROPIC_BASE_URL: optionalText,
});

export const delegationSection = delegationEnv.transform((e): DelegationConfig => ({
  maxSpawnDepth: e.HERALD_DELEGATION_MAX_SPAWN_DEPTH,
  maxConcurrentChildren: e.HERALD_DELEGATION_MAX_CONCURRENT_CHILDREN,
  maxIterations: e.HERALD_DELEGATION_MAX_ITERATIONS,
  orchestratorEnabled: e.HERALD_DELEGATION_ORCHESTRATOR_ENABLED,
  maxSummaryChars: e.HERALD_DELEGATION_MAX_SUMMARY_CHARS,
  model: endpointFor(e.HERALD_DELEGATION_MODEL, e),
}));
