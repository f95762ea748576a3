import { z } from 'zod';
import { integer, oneOf, optionalText, url } from './fields.ts';

export interface ObservabilityConfig {
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** Port of /metrics, /healthz and /readyz on the roles without an API (worker, reviewer, scheduler). */
  metricsPort: number;
  /** HERALD_METRICS_PORT was set: a port in use is then an error, not a reason to take the next one. */
  metricsPortGiven: boolean;
  /** Address the metrics server binds: loopback unless HERALD_METRICS_HOST asks (the image sets 0.0.0.0). */
  metricsHost: string;
  /**
   * LOG_FORMAT: `json` lines for machines, `pretty` lines for people; `auto` (the default) is
   * pretty when stdout is a terminal, JSON otherwise (settled by the command, which sees stdout).
   */
  logFormat: 'auto' | 'json' | 'pretty';
  /** OTLP/HTTP collector base URL (OTEL_EXPORTER_OTLP_ENDPOINT); tracing is off without it. */
  otlpEndpoint: string | undefined;
}

/** The OpenTelemetry-conventional Prometheus port; roles on one host take the next free ones. */
export const DEFAULT_METRICS_PORT = 9464;

export const observabilitySection = z
  .object({
    LOG_LEVEL: oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    LOG_FORMAT: oneOf(['auto', 'json', 'pretty']).default('auto'),
    HERALD_METRICS_PORT: integer(0, 65535).optional(),
    HERALD_METRICS_HOST: optionalText,
    OTEL_EXPORTER_OTLP_ENDPOINT: optionalText.pipe(url(/^https?:$/, 'http://otel-collector:4318').optional()),
  })
  .transform((e): ObservabilityConfig => ({
    logLevel: e.LOG_LEVEL,
    logFormat: e.LOG_FORMAT,
    metricsPort: e.HERALD_METRICS_PORT ?? DEFAULT_METRICS_PORT,
    metricsPortGiven: e.HERALD_METRICS_PORT !== undefined,
    metricsHost: e.HERALD_METRICS_HOST ?? '127.0.0.1',
    otlpEndpoint: e.OTEL_EXPORTER_OTLP_ENDPOINT,
  }));
