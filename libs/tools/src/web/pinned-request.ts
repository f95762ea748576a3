import http from 'node:http';
import type { IncomingMessage } from 'node:http';
import https from 'node:https';
import { isIP } from 'node:net';
import { assertAddressAllowed, pinnedLookup } from './ssrf.ts';
import type { Allowlist, LookupFunction } from './ssrf.ts';

export interface PinnedRequest {
  method: 'GET' | 'POST' | 'DELETE';
  headers: Record<string, string>;
  body?: string;
  allowlist: Allowlist;
  /** How names are resolved (the system resolver unless a test injects one). */
  lookup?: LookupFunction;
  signal: AbortSignal;
}

/**
 * One HTTP(S) request to a URL chosen by someone outside the platform (a model, a cron job's
 * owner), connected to an address that passed the private-address check: IP literals are checked
 * here, names in the pinned lookup, which the socket connects with. No connection reuse, so no
 * earlier answer decides where this request goes; redirects are the caller's decision.
 */
export function pinnedRequest(url: URL, request: PinnedRequest): Promise<IncomingMessage> {
  const hostname = url.hostname.replace(/^\[|\]$/g, '');
  if (isIP(hostname)) assertAddressAllowed(hostname, hostname, request.allowlist);
  const client = url.protocol === 'https:' ? https : http;
  return new Promise((resolve, reject) => {
    const req = client.request(url, {
      method: request.method,
      agent: false,
      lookup: pinnedLookup(request.allowlist, request.lookup),
      signal: request.signal,
      headers: request.headers,
    });
    req.once('response', resolve);
    req.once('error', reject);
    req.end(request.body);
  });
}
