import { describe, expect, it } from 'vitest';
import { trace } from '@opentelemetry/api';
import { contextFromTraceParent, currentTraceParent, startTracing, traceLogFields, withSpan } from '@herald/telemetry';

describe('tracing without an OTLP endpoint', () => {
  it('starts nothing, propagates nothing and runs the work as it is', async () => {
    expect(await startTracing({ endpoint: undefined, serviceName: 'herald-test' })).toBeNull();
    let active: unknown = 'unset';
    const result = await withSpan('herald.turn', { a: 1 }, async () => {
      active = trace.getActiveSpan();
      return 42;
    });
    expect(result).toBe(42);
    // No span was created and no context manager was installed.
    expect(active).toBeUndefined();
    expect(currentTraceParent()).toBeUndefined();
    expect(contextFromTraceParent('00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01')).toBeUndefined();
    expect(traceLogFields()).toEqual({});
  });
});
