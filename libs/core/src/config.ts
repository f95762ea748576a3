import { z } from 'zod';

/** Providers Herald speaks natively; any OpenAI-compatible server goes through `openai`. */
export const PROVIDERS = ['openai', 'anthropic'] as const;
export type ProviderName = (typeof PROVIDERS)[number];

export interface ModelConfig {
  provider: ProviderName;
  model: string;
  apiKey: string | undefined;
  baseURL: string | undefined;
}

export interface Config {
  databaseUrl: string;
  redisUrl: string;
  host: string;
  port: number;
  apiToken: string | undefined;
  /** Where `herald chat` finds the API; defaults to this machine's PORT. */
  apiUrl: string;
  /** null: no model configured; the worker answers with a note on how to configure one. */
  model: ModelConfig | null;
  queuePrefix: string;
  logLevel: string;
  maxMessageChars: number;
  maxIterations: number;
  workerConcurrency: number;
  leaseTtlMs: number;
  modelTimeoutMs: number;
  providerMaxRetries: number;
  providerRetryBaseMs: number;
  shutdownTimeoutMs: number;
  reconcileIntervalMs: number;
  /** Runs of one turn (the first plus resumes after crashes) before it ends with an error reply. */
  turnMaxAttempts: number;
  /** Postgres connections per process; a turn holds one only while a query runs. */
  dbPoolSize: number;
  /** Most unanswered messages one session may hold. */
  sessionBacklog: number;
  /** Per-turn recall provider; off by default. */
  recall: 'off' | 'past-sessions';
  /** Module paths of plugin tools, loaded by workers. */
  toolPlugins: string[];
  /** How often each scheduler replica looks for due cron jobs and finished cron runs. */
  schedulerTickMs: number;
  /** Consecutive failed runs after which a cron job is paused and its owner told. */
  cronMaxFailures: number;
}

/** Thrown when the environment is invalid; `message` is one line per bad variable. */
export class ConfigError extends Error {
  override readonly name = 'ConfigError';
}

const integer = (min: number, max: number) =>
  z.coerce
    .number({ error: 'expected a number' })
    .int({ error: 'expected a whole number' })
    .min(min, { error: `expected at least ${min}` })
    .max(max, { error: `expected at most ${max}` });

const url = (protocols: RegExp, hint: string) =>
  z.string().refine(
    (value) => {
      try {
        return protocols.test(new URL(value).protocol);
      } catch {
        return false;
      }
    },
    { error: `expected a URL like ${hint}` },
  );

const optionalText = z
  .string()
  .optional()
  .transform((value) => (value === undefined || value.trim() === '' ? undefined : value.trim()));

const schema = z.object({
  DATABASE_URL: url(/^postgres(ql)?:$/, 'postgres://user@127.0.0.1:5432/herald').default(
    'postgres://127.0.0.1:5432/herald',
  ),
  REDIS_URL: url(/^rediss?:$/, 'redis://127.0.0.1:6379').default('redis://127.0.0.1:6379'),
  HOST: optionalText,
  HERALD_URL: optionalText.pipe(url(/^https?:$/, 'http://127.0.0.1:8080').optional()),
  PORT: integer(0, 65535).default(8080),
  HERALD_API_TOKEN: optionalText.refine((value) => value === undefined || value.length >= 8, {
    error: 'expected at least 8 characters',
  }),
  HERALD_MODEL: optionalText.refine(
    (value) => value === undefined || /^(openai|anthropic)\/\S+$/.test(value),
    { error: 'expected provider/model with provider openai or anthropic, e.g. openai/gpt-4.1-mini' },
  ),
  OPENAI_API_KEY: optionalText,
  OPENAI_BASE_URL: optionalText.pipe(url(/^https?:$/, 'http://127.0.0.1:11434/v1').optional()),
  ANTHROPIC_API_KEY: optionalText,
  ANTHROPIC_BASE_URL: optionalText.pipe(url(/^https?:$/, 'https://api.anthropic.com').optional()),
  HERALD_QUEUE_PREFIX: z
    .string()
    .regex(/^[A-Za-z0-9_-]+$/, { error: 'expected letters, digits, _ or -' })
    .default('herald'),
  LOG_LEVEL: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  HERALD_MAX_MESSAGE_CHARS: integer(1, 1_000_000).default(32_000),
  HERALD_MAX_ITERATIONS: integer(1, 1000).default(90),
  HERALD_WORKER_CONCURRENCY: integer(1, 1000).default(16),
  HERALD_LEASE_TTL_MS: integer(1000, 600_000).default(10_000),
  HERALD_MODEL_TIMEOUT_MS: integer(100, 3_600_000).default(120_000),
  HERALD_PROVIDER_MAX_RETRIES: integer(0, 20).default(3),
  HERALD_PROVIDER_RETRY_BASE_MS: integer(0, 60_000).default(1000),
  HERALD_SHUTDOWN_TIMEOUT_MS: integer(0, 600_000).default(25_000),
  HERALD_RECONCILE_INTERVAL_MS: integer(100, 3_600_000).default(5000),
  HERALD_SESSION_BACKLOG: integer(1, 10_000).default(50),
  HERALD_TURN_MAX_ATTEMPTS: integer(1, 100).default(3),
  HERALD_DB_POOL_SIZE: integer(1, 500).default(10),
  HERALD_TOOL_PLUGINS: optionalText,
  HERALD_SCHEDULER_TICK_MS: integer(50, 600_000).default(1000),
  HERALD_CRON_MAX_FAILURES: integer(1, 1000).default(3),
  HERALD_RECALL: z.enum(['off', 'past-sessions'], { error: 'expected off or past-sessions' }).default('off'),
});

function describeValue(env: Record<string, string | undefined>, key: string): string {
  const value = env[key];
  if (value === undefined) return 'it is not set';
  if (/KEY|TOKEN/.test(key)) return 'got a value that is not valid';
  return `got '${value}'`;
}

/**
 * Parses the environment once into a frozen Config. Every invalid variable is reported, one line
 * each, naming the variable and what is wrong, so a bad deployment fails at start and says why.
 */
export function loadConfig(env: Record<string, string | undefined> = process.env): Config {
  const parsed = schema.safeParse(env);
  if (!parsed.success) {
    const lines = parsed.error.issues.map((issue) => {
      const key = String(issue.path[0] ?? 'environment');
      return `${key}: ${issue.message}, ${describeValue(env, key)}`;
    });
    throw new ConfigError(lines.join('\n'));
  }
  const e = parsed.data;
  let model: ModelConfig | null = null;
  if (e.HERALD_MODEL !== undefined) {
    const slash = e.HERALD_MODEL.indexOf('/');
    const provider = e.HERALD_MODEL.slice(0, slash) as ProviderName;
    const name = e.HERALD_MODEL.slice(slash + 1);
    const apiKey = provider === 'openai' ? e.OPENAI_API_KEY : e.ANTHROPIC_API_KEY;
    const baseURL = provider === 'openai' ? e.OPENAI_BASE_URL : e.ANTHROPIC_BASE_URL;
    // A local OpenAI-compatible server (Ollama, vLLM) usually needs no key; the public APIs do.
    if (apiKey === undefined && baseURL === undefined) {
      const keyVar = provider === 'openai' ? 'OPENAI_API_KEY' : 'ANTHROPIC_API_KEY';
      const urlVar = provider === 'openai' ? 'OPENAI_BASE_URL' : 'ANTHROPIC_BASE_URL';
      throw new ConfigError(
        `${keyVar}: required when HERALD_MODEL uses provider ${provider} (or set ${urlVar} for a server that needs no key), it is not set`,
      );
    }
    model = { provider, model: name, apiKey, baseURL };
  }
  return Object.freeze({
    databaseUrl: e.DATABASE_URL,
    redisUrl: e.REDIS_URL,
    // Without a token the API is open, so it only listens on loopback unless HOST says otherwise.
    host: e.HOST ?? (e.HERALD_API_TOKEN === undefined ? '127.0.0.1' : '0.0.0.0'),
    port: e.PORT,
    apiToken: e.HERALD_API_TOKEN,
    apiUrl: e.HERALD_URL ?? `http://127.0.0.1:${e.PORT}`,
    model,
    queuePrefix: e.HERALD_QUEUE_PREFIX,
    logLevel: e.LOG_LEVEL,
    maxMessageChars: e.HERALD_MAX_MESSAGE_CHARS,
    maxIterations: e.HERALD_MAX_ITERATIONS,
    workerConcurrency: e.HERALD_WORKER_CONCURRENCY,
    leaseTtlMs: e.HERALD_LEASE_TTL_MS,
    modelTimeoutMs: e.HERALD_MODEL_TIMEOUT_MS,
    providerMaxRetries: e.HERALD_PROVIDER_MAX_RETRIES,
    providerRetryBaseMs: e.HERALD_PROVIDER_RETRY_BASE_MS,
    shutdownTimeoutMs: e.HERALD_SHUTDOWN_TIMEOUT_MS,
    reconcileIntervalMs: e.HERALD_RECONCILE_INTERVAL_MS,
    sessionBacklog: e.HERALD_SESSION_BACKLOG,
    recall: e.HERALD_RECALL,
    turnMaxAttempts: e.HERALD_TURN_MAX_ATTEMPTS,
    dbPoolSize: e.HERALD_DB_POOL_SIZE,
    schedulerTickMs: e.HERALD_SCHEDULER_TICK_MS,
    cronMaxFailures: e.HERALD_CRON_MAX_FAILURES,
    toolPlugins: (e.HERALD_TOOL_PLUGINS ?? '').split(',').map((p) => p.trim()).filter((p) => p !== ''),
  });
}
