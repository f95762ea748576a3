import type { FastifyReply, FastifyRequest } from 'fastify';

/** Whether the client asked for a server-sent event stream. */
export function wantsEventStream(request: FastifyRequest): boolean {
  return /\btext\/event-stream\b/i.test(request.headers.accept ?? '');
}

/** The client's resume point: the Last-Event-ID header (or `last_event_id` in the query, for EventSource polyfills). */
export function lastEventId(request: FastifyRequest): string | undefined {
  const header = request.headers['last-event-id'];
  const value = typeof header === 'string' ? header : (request.query as { last_event_id?: unknown } | undefined)?.last_event_id;
  return typeof value === 'string' && /^[0-9-]{1,40}$/.test(value) ? value : undefined;
}

// A comment line now and then keeps proxies and load balancers from closing an idle stream.
const HEARTBEAT_MS = 15_000;

export interface EventStream {
  send(event: string | undefined, data: unknown, id?: string): void;
  /** Aborted when the client goes away. */
  signal: AbortSignal;
  end(): void;
}

/**
 * Takes the response over as a text/event-stream. The request's hooks (authentication) have run;
 * from here Fastify no longer sends anything on this reply.
 */
export function openEventStream(request: FastifyRequest, reply: FastifyReply, headers: Record<string, string> = {}): EventStream {
  reply.hijack();
  const raw = reply.raw;
  raw.writeHead(200, {
    'content-type': 'text/event-stream; charset=utf-8',
    'cache-control': 'no-cache, no-transform',
    connection: 'keep-alive',
    'x-accel-buffering': 'no',
    ...headers,
  });
  raw.flushHeaders();
  const gone = new AbortController();
  request.raw.once('close', () => gone.abort());
  raw.once('close', () => gone.abort());
  const heartbeat = setInterval(() => raw.write(': ping\n\n'), HEARTBEAT_MS);
  heartbeat.unref();
  return {
    signal: gone.signal,
    send(event, data, id) {
      if (gone.signal.aborted) return;
      const text = typeof data === 'string' ? data : JSON.stringify(data);
      raw.write(`${id === undefined ? '' : `id: ${id}\n`}${event === undefined ? '' : `event: ${event}\n`}data: ${text}\n\n`);
    },
    end() {
      clearInterval(heartbeat);
      if (!raw.writableEnded) raw.end();
    },
  };
}
