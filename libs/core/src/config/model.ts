import { z } from 'zod';
import { integer, optionalText, url } from './fields.ts';

/** Providers Herald speaks natively; any OpenAI-compatible server goes through `openai`. */
export const PROVIDERS = ['openai', 'anthropic'] as const;
export type ProviderName = (typeof PROVIDERS)[number];

/** The model HERALD_MODEL names and how to reach it. */
export interface ModelEndpoint {
  provider: ProviderName;
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
}

const KEY_VARIABLE = { openai: 'OPENAI_API_KEY', anthropic: 'ANTHROPIC_API_KEY' } as const;
const URL_VARIABLE = { openai: 'OPENAI_BASE_URL', anthropic: 'ANTHROPIC_BASE_URL' } as const;

/** A `provider/model` variable (HERALD_MODEL, HERALD_SUMMARY_MODEL, HERALD_DELEGATION_MODEL). */
export const modelName = optionalText.refine((value) => value === undefined || /^(openai|anthropic)\/\S+$/.test(value), {
  error: 'expected provider/model with provider openai or anthropic, e.g. openai/gpt-4.1-mini',
});

/** The providers' keys and base URLs as the environment holds them. */
export type ProviderEnv = { [K in (typeof KEY_VARIABLE)[ProviderName] | (typeof URL_VARIABLE)[ProviderName]]?: string | undefined };

function isProvider(name: string): name is ProviderName {
  return (PROVIDERS as readonly string[]).includes(name);
}

/** The endpoint a `provider/model` value names, reached with that provider's key and base URL. */
export function endpointFor(value: string | undefined, e: ProviderEnv): ModelEndpoint | undefined {
  if (value === undefined) return undefined;
  const slash = value.indexOf('/');
  const provider = value.slice(0, slash);
  // A value without a known provider is refused by modelName; no endpoint (and no second error) here.
  if (!isProvider(provider)) return undefined;
  return { provider, model: value.slice(slash + 1), apiKey: e[KEY_VARIABLE[provider]], baseURL: e[URL_VARIABLE[provider]] };
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
});

function endpointOf(e: z.output<typeof modelEnv>): ModelEndpoint | null {
  return endpointFor(e.HERALD_MODEL, e) ?? null;
}

export const modelSection = modelEnv
  .superRefine((e, context) => {
    const endpoint = endpointOf(e);
    // A local OpenAI-compatible server (Ollama, vLLM) usually needs no key; the public APIs do.
    if (endpoint === null || endpoint.apiKey !== undefined || endpoint.baseURL !== undefined) return;
    context.addIssue({
      code: 'custom',
      path: [KEY_VARIABLE[endpoint.provider]],
      message: `required when HERALD_MODEL uses provider ${endpoint.provider} (or set ${URL_VARIABLE[endpoint.provider]} for a server that needs no key)`,
    });
  })
  .transform(
    (e): ModelConfig => ({
      endpoint: endpointOf(e),
      timeoutMs: e.HERALD_MODEL_TIMEOUT_MS,
      maxRetries: e.HERALD_PROVIDER_MAX_RETRIES,
      retryBaseMs: e.HERALD_PROVIDER_RETRY_BASE_MS,
    }),
  );
