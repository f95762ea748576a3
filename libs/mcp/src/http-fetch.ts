import { Readable, Transform } from 'node:stream';
import type { IncomingMessage } from 'node:http';
import { pinnedRequest } from '@herald/tools';
import type { Allowlist, LookupFunction } from '@herald/tools';

type Fetch = (url: string | URL, init?: RequestInit) => Promise<Response>;

/** Cuts a response body off once it passes `maxBytes`: one server cannot fill the worker's memory. */
function capped(maxBytes: number): Transform {
  let seen = 0;
  return new Transform({
    transform(chunk: Buffer, _encoding, done) {
      seen += chunk.length;
      if (seen > maxBytes) done(new Error(`the server sent more than ${Math.round(maxBytes / 1024 / 1024)} MB; the response was cut off`));
      else done(null, chunk);
    },
  });
}

/** `source` through the cap; pipe() alone would leave an aborted source's error unhandled. */
function throughCap(source: NodeJS.ReadableStream & { on(event: 'error', listener: (error: Error) => void): unknown }, maxBytes: number): Transform {
  const cap = capped(maxBytes);
  source.on('error', (error: Error) => cap.destroy(error));
  return source.pipe(cap);
}

function headersOf(init: RequestInit | undefined): Record<string, string> {
  const headers: Record<string, string> = {};
  new Headers(init?.headers).forEach((value, name) => {
    headers[name] = value;
  });
  return headers;
}

function toResponse(message: IncomingMessage, maxBytes: number): Response {
  const headers = new Headers();
  for (const [name, value] of Object.entries(message.headers)) {
    if (typeof value === 'string') headers.set(name, value);
    else if (Array.isArray(value)) for (const item of value) headers.append(name, item);
  }
  const status = message.statusCode ?? 502;
  const noBody = status === 204 || status === 304;
  const body = noBody ? null : (Readable.toWeb(throughCap(message, maxBytes)) as ReadableStream<Uint8Array>);
  return new Response(body, { status, statusText: message.statusMessage ?? '', headers });
}

const METHODS = new Set(['GET', 'POST', 'DELETE']);

/**
 * fetch for an MCP server's URL under web_extract's SSRF rules: every connection goes to an
 * address that passed the private-address check (pinned, so DNS rebinding cannot slip in), no
 * redirects are followed, and every response body is capped.
 */
export function pinnedFetch(allowlist: Allowlist, maxBytes: number, lookup?: LookupFunction): Fetch {
  return async (input, init) => {
    const method = (init?.method ?? 'GET').toUpperCase();
    if (!METHODS.has(method)) throw new Error(`MCP over HTTP does not use ${method}`);
    const body = typeof init?.body === 'string' ? init.body : init?.body == null ? undefined : String(init.body);
    const message = await pinnedRequest(new URL(String(input)), {
      method: method as 'GET' | 'POST' | 'DELETE',
      headers: headersOf(init),
      ...(body === undefined ? {} : { body }),
      allowlist,
      ...(lookup ? { lookup } : {}),
      signal: init?.signal ?? new AbortController().signal,
    });
    return toResponse(message, maxBytes);
  };
}

/** The operator marked the server internal: plain fetch, still with the body cap and no redirects. */
export function internalFetch(maxBytes: number): Fetch {
  return async (input, init) => {
    const response = await fetch(input, { ...init, redirect: 'manual' });
    if (response.body === null) return response;
    const body = throughCap(Readable.fromWeb(response.body as never), maxBytes);
    return new Response(Readable.toWeb(body) as ReadableStream<Uint8Array>, { status: response.status, statusText: response.statusText, headers: response.headers });
  };
}
