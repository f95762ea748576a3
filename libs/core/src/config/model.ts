import { z } from 'zod';
import { commaList, integer, oneOf, optionalText, url } from './fields.ts';

/** Providers Herald speaks natively; any OpenAI-compatible server goes through `openai`. */
export const PROVIDERS = ['openai', 'anthropic'] as const;
export type ProviderName = (typeof PROVIDERS)[number];

/** The model HERALD_MODEL names and how to reach it. */
export interface ModelEndpoint {
  /** `openai` or `anthropic` (the implicit providers), or a provider named in HERALD_PROVIDERS_FILE. */
  provider: string;
  model: string;
  apiKey: string | undefined;
  baseURL: string | undefined;
}

export interface ModelConfig {
  /** null: no model configured; the worker answers with a note on how to configure one. */
  endpoint: ModelEndpoint | null;
  /** Timeout of one model call. */
  timeoutMs: number;
  /** Retries of a failed model call, the first after retryBaseMs, doubling. */
  maxRetries: number;
  retryBaseMs: number;
  /** Models answer as a stream and running turns publish their progress (HERALD_STREAMING). */
  streaming: boolean;
  /** Named providers (HERALD_PROVIDERS_FILE): read and checked at start by the roles that call models. */
  providersFile: string | undefined;
  /** Models tried in order when the main one fails over (HERALD_MODEL_FALLBACKS, `provider/model` each). */
  fallbacks: string[];
}

const KEY_VARIABLE = { openai: 'OPENAI_API_KEY', anthropic: 'ANTHROPIC_API_KEY' } as const;
const URL_VARIABLE = { openai: 'OPENAI_BASE_URL', anthropic: 'ANTHROPIC_BASE_URL' } as const;

/** `provider/model`: the provider is openai, anthropic or a name from HERALD_PROVIDERS_FILE. */
export const MODEL_REFERENCE = /^[a-z][a-z0-9_-]{0,39}\/\S+$/;
const MODEL_HINT = 'expected provider/model, e.g. openai/gpt-4.1-mini (the provider openai, anthropic or one named in HERALD_PROVIDERS_FILE)';

/** A `provider/model` variable (HERALD_MODEL, HERALD_SUMMARY_MODEL, HERALD_DELEGATION_MODEL). */
export const modelName = optionalText.refine((value) => value === undefined || MODEL_REFERENCE.test(value), { error: MODEL_HINT });

const isImplicit = (provider: string): provider is ProviderName => (PROVIDERS as readonly string[]).includes(provider);

/** The providers' keys and base URLs as the environment holds them. */
export type ProviderEnv = { [K in (typeof KEY_VARIABLE)[ProviderName] | (typeof URL_VARIABLE)[ProviderName]]?: string | undefined };

/** The endpoint a `provider/model` value names, reached with that provider's key and base URL. */
export function endpointFor(value: string | undefined, e: ProviderEnv): ModelEndpoint | undefined {
  if (value === undefined) return undefined;
  const slash = value.indexOf('/');
  const provider = value.slice(0, slash);
  // No provider before a slash: refused by modelName; no endpoint (and no second, garbled error) here.
  if (slash < 1) return undefined;
  const model = value.slice(slash + 1);
  // A named provider's key and URL come from its entry in HERALD_PROVIDERS_FILE, read at start.
  if (!isImplicit(provider)) return { provider, model, apiKey: undefined, baseURL: undefined };
  return { provider, model, apiKey: e[KEY_VARIABLE[provider]], baseURL: e[URL_VARIABLE[provider]] };
}

const modelEnv = z.object({
  HERALD_MODEL: modelName,
  OPENAI_API_KEY: optionalText,
  OPENAI_BASE_URL: optionalText.pipe(url(/^https?:$/, 'http://127.0.0.1:11434/v1').optional()),
  ANTHROPIC_API_KEY: optionalText,
  ANTHROPIC_BASE_URL: optionalText.pipe(url(/^https?:$/, 'https://api.anthropic.com').optional()),
  HERALD_MODEL_TIMEOUT_MS: integer(100, 3_600_000).default(120_000),
  HERALD_PROVIDER_MAX_RETRIES: integer(0, 20).default(3),
  HERALD_PROVIDER_RETRY_BASE_MS: integer(0, 60_000).default(1000),
  HERALD_STREAMING: oneOf(['on', 'off'] as const).default('on'),
  HERALD_PROVIDERS_FILE: optionalText,
  HERALD_MODEL_FALLBACKS: commaList.refine((values) => values.every((value) => MODEL_REFERENCE.test(value)), { error: MODEL_HINT }),
});

function endpointOf(e: z.output<typeof modelEnv>): ModelEndpoint | null {
  return endpointFor(e.HERALD_MODEL, e) ?? null;
}

export const modelSection = modelEnv
  .superRefine((e, context) => {
    const endpoint = endpointOf(e);
    if (endpoint !== null && !isImplicit(endpoint.provider) && e.HERALD_PROVIDERS_FILE === undefined) {
      context.addIssue({
        code: 'custom',
        path: ['HERALD_MODEL'],
        message: `names the provider ${endpoint.provider}, which is neither openai nor anthropic; declare it in HERALD_PROVIDERS_FILE`,
      });
      return;
    }
    // A local OpenAI-compatible server (Ollama, vLLM) usually needs no key; the public APIs do.
    if (endpoint === null || !isImplicit(endpoint.provider) || e.HERALD_PROVIDERS_FILE !== undefined) return;
    if (endpoint.apiKey !== undefined || endpoint.baseURL !== undefined) return;
    context.addIssue({
      code: 'custom',
      path: [KEY_VARIABLE[endpoint.provider]],
      message: `required when HERALD_MODEL uses provider ${endpoint.provider} (or set ${URL_VARIABLE[endpoint.provider]} for a server that needs no key)`,
    });
  })
  .transform((e): ModelConfig => ({
    endpoint: endpointOf(e),
    timeoutMs: e.HERALD_MODEL_TIMEOUT_MS,
    maxRetries: e.HERALD_PROVIDER_MAX_RETRIES,
    retryBaseMs: e.HERALD_PROVIDER_RETRY_BASE_MS,
    streaming: e.HERALD_STREAMING === 'on',
    providersFile: e.HERALD_PROVIDERS_FILE,
    fallbacks: e.HERALD_MODEL_FALLBACKS,
  }));
