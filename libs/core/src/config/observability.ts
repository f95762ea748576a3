import { z } from 'zod';
import { integer, oneOf, optionalText, url } from './fields.ts';

export interface ObservabilityConfig {
  logLevel: 'fatal' | 'error' | 'warn' | 'info' | 'debug' | 'trace' | 'silent';
  /** Port of /metrics, /healthz and /readyz on the roles without an API (worker, reviewer, scheduler). */
  metricsPort: number;
  /** OTLP/HTTP collector base URL (OTEL_EXPORTER_OTLP_ENDPOINT); tracing is off without it. */
  otlpEndpoint: string | undefined;
}

export const observabilitySection = z
  .object({
    LOG_LEVEL: oneOf(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
    HERALD_METRICS_PORT: integer(0, 65535).default(9464),
    OTEL_EXPORTER_OTLP_ENDPOINT: optionalText.pipe(url(/^https?:$/, 'http://otel-collector:4318').optional()),
  })
  .transform(
    (e): ObservabilityConfig => ({ logLevel: e.LOG_LEVEL, metricsPort: e.HERALD_METRICS_PORT, otlpEndpoint: e.OTEL_EXPORTER_OTLP_ENDPOINT }),
  );
