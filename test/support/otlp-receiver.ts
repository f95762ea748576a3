import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedSpan {
  service: string;
  traceId: string;
  spanId: string;
  parentSpanId: string;
  name: string;
  attributes: Record<string, unknown>;
}

export interface OtlpReceiver {
  /** For OTEL_EXPORTER_OTLP_ENDPOINT. */
  url: string;
  spans: ReceivedSpan[];
  close(): Promise<void>;
}

function attributeValue(value: Record<string, unknown>): unknown {
  return value.stringValue ?? value.intValue ?? value.boolValue ?? value.doubleValue;
}

/**
 * A collector's OTLP/HTTP trace endpoint (POST /v1/traces, the JSON encoding that
 * @opentelemetry/exporter-trace-otlp-http sends), keeping every span it is sent.
 */
export async function startOtlpReceiver(): Promise<OtlpReceiver> {
  const spans: ReceivedSpan[] = [];
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      if (request.method !== 'POST' || request.url !== '/v1/traces' || !String(request.headers['content-type']).includes('json')) {
        response.writeHead(415).end();
        return;
      }
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8'));
      for (const resourceSpans of body.resourceSpans ?? []) {
        const service = resourceSpans.resource?.attributes?.find((a: any) => a.key === 'service.name')?.value?.stringValue ?? '';
        for (const scope of resourceSpans.scopeSpans ?? []) {
          for (const span of scope.spans ?? []) {
            const attributes = Object.fromEntries((span.attributes ?? []).map((a: any) => [a.key, attributeValue(a.value)]));
            spans.push({ service, traceId: span.traceId, spanId: span.spanId, parentSpanId: span.parentSpanId ?? '', name: span.name, attributes });
          }
        }
      }
      response.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    spans,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
