import { context, propagation, ROOT_CONTEXT, SpanStatusCode, trace } from '@opentelemetry/api';
import type { Attributes, Context } from '@opentelemetry/api';

/**
 * OpenTelemetry spans across a message's path: ingress, the queue (the W3C traceparent rides in
 * the job data and on the outbox row), the worker's turn, model and tool calls, the delivery. Off
 * unless an OTLP endpoint is configured: then the SDK is never loaded, no context is propagated,
 * and each instrumentation point costs one boolean check.
 */
let enabled = false;

export interface TracingOptions {
  /** OTEL_EXPORTER_OTLP_ENDPOINT: the collector's base URL; spans go to <endpoint>/v1/traces. */
  endpoint: string | undefined;
  /** The resource's service.name, e.g. herald-worker. */
  serviceName: string;
}

/** Starts the SDK when an endpoint is set; returns the flush-and-stop step for the shutdown. */
export async function startTracing(options: TracingOptions): Promise<(() => Promise<void>) | null> {
  if (options.endpoint === undefined || enabled) return null;
  const [{ NodeTracerProvider, BatchSpanProcessor }, { OTLPTraceExporter }, { resourceFromAttributes }, { W3CTraceContextPropagator }] = await Promise.all([
    import('@opentelemetry/sdk-trace-node'),
    import('@opentelemetry/exporter-trace-otlp-http'),
    import('@opentelemetry/resources'),
    import('@opentelemetry/core'),
  ]);
  const exporter = new OTLPTraceExporter({ url: `${options.endpoint.replace(/\/+$/, '')}/v1/traces` });
  const provider = new NodeTracerProvider({
    resource: resourceFromAttributes({ 'service.name': options.serviceName }),
    spanProcessors: [new BatchSpanProcessor(exporter, { scheduledDelayMillis: 500 })],
  });
  provider.register({ propagator: new W3CTraceContextPropagator() });
  enabled = true;
  return async () => {
    await provider.shutdown();
    trace.disable();
    context.disable();
    propagation.disable();
    enabled = false;
  };
}

/**
 * Runs `fn` inside a span (a child of `parent`, or of the active span). With tracing off it just
 * runs `fn`. A thrown error marks the span as failed and is rethrown unchanged.
 */
export function withSpan<T>(name: string, attributes: Attributes, fn: () => Promise<T>, parent?: Context): Promise<T> {
  if (!enabled) return fn();
  return trace.getTracer('herald').startActiveSpan(name, { attributes }, parent ?? context.active(), async (span) => {
    try {
      return await fn();
    } catch (error) {
      span.recordException(error as Error);
      span.setStatus({ code: SpanStatusCode.ERROR, message: (error as Error)?.message });
      throw error;
    } finally {
      span.end();
    }
  });
}

/** Adds attributes to the active span (an outcome known only at the end). */
export function setSpanAttributes(attributes: Attributes): void {
  if (enabled) trace.getActiveSpan()?.setAttributes(attributes);
}

/** The active span's W3C traceparent, to carry in job data or a row; undefined when off. */
export function currentTraceParent(): string | undefined {
  if (!enabled) return undefined;
  const carrier: Record<string, string> = {};
  propagation.inject(context.active(), carrier);
  return carrier.traceparent;
}

/** The context a carried traceparent continues; undefined when off or when none was carried. */
export function contextFromTraceParent(traceParent: string | null | undefined): Context | undefined {
  if (!enabled || !traceParent) return undefined;
  return propagation.extract(ROOT_CONTEXT, { traceparent: traceParent });
}

/**
 * pino's mixin: the trace and span ids of the active span on every log line written inside it.
 * pino merges each line's fields into the returned object, so it is a new one every time.
 */
export function traceLogFields(): Record<string, string> {
  const span = enabled ? trace.getActiveSpan()?.spanContext() : undefined;
  return span ? { trace_id: span.traceId, span_id: span.spanId } : {};
}
