import { pino } from 'pino';
import { PinoPretty } from 'pino-pretty';
import type { LoggerOptions } from 'pino';
import { CHAT_PLATFORMS, PLATFORM_FACTS } from './platform-registry.ts';
import { redactSecrets } from './redact.ts';

/** The narrow logging interface libraries depend on; services pass pino children in. */
export interface Logger {
  debug(object: object, message?: string): void;
  info(object: object, message?: string): void;
  warn(object: object, message?: string): void;
  error(object: object, message?: string): void;
  child(bindings: Record<string, unknown>): Logger;
}

// Fixed at start-up and never built from input: anything that can carry a secret.
const REDACT_PATHS = [
  'apiKey',
  '*.apiKey',
  'apiToken',
  '*.apiToken',
  'token',
  '*.token',
  'password',
  '*.password',
  'authorization',
  '*.authorization',
  'req.headers.authorization',
  // The parsed Config's secrets, should a whole section ever be logged.
  'config.database.url',
  'config.redis.url',
  'config.api.token',
  'config.model.endpoint.apiKey',
  // Each platform's secrets, from the registry: its settings' secret fields (every account's) and its webhooks' secret headers.
  ...CHAT_PLATFORMS.flatMap((platform) => {
    const facts = PLATFORM_FACTS[platform];
    return [
      ...facts.secretHeaders.map((header) => `req.headers["${header}"]`),
      ...facts.secretSettings.flatMap((field) => [`config.platforms.${platform}.${field}`, `config.platforms.accounts.${platform}[*].${field}`]),
    ];
  }),
];

/** Lines for a person at a terminal: time, level and message, the fields after; nothing per process. */
function prettyStream(): { write(line: string): void } {
  return PinoPretty({ colorize: true, translateTime: 'SYS:HH:MM:ss', ignore: 'pid,hostname,service', sync: true, singleLine: true });
}

/**
 * `mixin` adds fields to every line, e.g. the active trace and span ids. `pretty` writes lines for
 * people (pino-pretty) instead of JSON; secrets are redacted before either.
 */
export function createLogger(options: { level: string; service: string; mixin?: () => object; destination?: { write(line: string): void }; pretty?: boolean }): Logger {
  const settings: LoggerOptions = {
    level: options.level,
    base: { service: options.service, pid: process.pid },
    ...(options.mixin ? { mixin: options.mixin } : {}),
    redact: { paths: REDACT_PATHS, censor: '[redacted]' },
    // Known field names above; secrets by their shape anywhere in the line (nested errors, URLs).
    hooks: { streamWrite: redactSecrets },
  };
  // Stdout unless told (a test reads the lines it would print).
  const destination = options.destination ?? (options.pretty === true ? prettyStream() : undefined);
  return destination ? pino(settings, destination) : pino(settings);
}

export const silentLogger: Logger = pino({ level: 'silent' });
