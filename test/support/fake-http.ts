import { createServer } from 'node:http';
import type { IncomingHttpHeaders, IncomingMessage, Server, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

/**
 * The HTTP plumbing every fake server shares: a loopback port of its own, the request body read
 * whole, a log of what was asked, and a close that does not wait for clients holding connections
 * open (long polls, hung model calls, keep-alive sockets).
 */

export interface LoggedRequest {
  method: string;
  /** The URL path without the query string. */
  path: string;
  /** The query string's parameters (the last value of a repeated name). */
  query: Record<string, string>;
  headers: IncomingHttpHeaders;
  /** The body parsed as JSON; the raw text when it is not JSON; undefined when empty. */
  body: any;
  /** When the request arrived (performance.now()). */
  at: number;
}

export interface FakeHttpRequest extends LoggedRequest {
  /** The body as sent. */
  raw: string;
  /** The body's bytes, for binary uploads (multipart). */
  bytes: Buffer;
}

export type FakeHttpHandler = (request: FakeHttpRequest, response: ServerResponse) => unknown;

export interface FakeHttpServer {
  server: Server;
  /** `http://<host>:<port>`, no trailing slash. */
  origin: string;
  port: number;
  /** Every request, in arrival order (the newest `retainRequests` when that is given). */
  requests: LoggedRequest[];
  close(): Promise<void>;
}

function readBody(request: IncomingMessage): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks)));
    request.on('error', reject);
  });
}

function parseBody(raw: string): unknown {
  if (raw === '') return undefined;
  try {
    return JSON.parse(raw);
  } catch {
    return raw;
  }
}

export function sendJson(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  if (body === undefined) {
    response.writeHead(status, headers);
    response.end();
    return;
  }
  const payload = JSON.stringify(body);
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload), ...headers });
  response.end(payload);
}

/** Starts a server whose handler gets each request with its body read; a throwing handler answers 500. */
export async function startFakeHttp(handler: FakeHttpHandler, options: { host?: string; retainRequests?: number } = {}): Promise<FakeHttpServer> {
  const host = options.host ?? '127.0.0.1';
  // A fake that keeps its own record (the model's) logs nothing here: a soak sends it thousands of long bodies.
  const retain = options.retainRequests ?? Number.POSITIVE_INFINITY;
  const sockets = new Set<Socket>();
  const requests: LoggedRequest[] = [];
  const server = createServer((incoming, response) => {
    void (async () => {
      const bytes = await readBody(incoming);
      const raw = bytes.toString('utf8');
      const logged: LoggedRequest = {
        method: incoming.method ?? 'GET',
        path: (incoming.url ?? '').split('?')[0] ?? '',
        query: Object.fromEntries(new URL(incoming.url ?? '/', 'http://fake').searchParams),
        headers: incoming.headers,
        body: parseBody(raw),
        at: performance.now(),
      };
      requests.push(logged);
      if (requests.length > retain) requests.splice(0, requests.length - retain);
      await handler({ ...logged, raw, bytes }, response);
    })().catch((error: unknown) => {
      if (!response.headersSent) sendJson(response, 500, { error: { message: String(error) } });
      else response.destroy();
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, host, resolve));
  const { port } = server.address() as AddressInfo;
  return {
    server,
    origin: `http://${host}:${port}`,
    port,
    requests,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
