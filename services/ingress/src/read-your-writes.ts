import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ReadRouting, RoutedRead } from '@herald/db';

/**
 * Read-your-writes for the routes that read a replica (docs/decisions/2026-12-06-read-replica.md).
 * After a write, and after a look at the turn a person waits on, the answer carries the primary's
 * WAL position in this header and, for the console, a cookie of the same value; a later read that
 * sends either back reads the primary until the replica has replayed that far.
 */
export const READ_AFTER_HEADER = 'x-herald-read-after';
export const READ_AFTER_COOKIE = 'herald_read_after';

/** How long a browser keeps its position: a replica further behind than this is an outage, not lag. */
const COOKIE_MAX_AGE_SECONDS = 120;

/** GET routes that hand out a position too: the turn a person waits on (its reply is on the primary). */
const MARKING_READS = new Set(['/v1/events/:id']);

function marks(request: FastifyRequest, reply: FastifyReply): boolean {
  const pattern = request.routeOptions.url ?? '';
  if (!pattern.startsWith('/v1/') || reply.statusCode >= 400) return false;
  if (String(reply.getHeader('content-type') ?? '').startsWith('text/event-stream')) return false;
  return request.method === 'GET' ? MARKING_READS.has(pattern) : request.method !== 'HEAD' && request.method !== 'OPTIONS';
}

function cookieValue(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const [key, ...rest] = part.trim().split('=');
    if (key === name) return rest.join('=');
  }
  return undefined;
}

/** The position a read must see: the header, else the cookie; anything else is ignored. */
export function readAfterOf(request: FastifyRequest): string | undefined {
  const header = request.headers[READ_AFTER_HEADER];
  if (typeof header === 'string' && header !== '') return header;
  return cookieValue(request.headers.cookie, READ_AFTER_COOKIE);
}

/** Where this request's lag-tolerant read goes. */
export function readDbFor(reads: ReadRouting, request: FastifyRequest): Promise<RoutedRead> {
  return reads.forRead(readAfterOf(request));
}

/** Adds the position to writes' answers (and the waited-on turn's); nothing without a replica. */
export function installReadYourWrites(app: FastifyInstance, reads: ReadRouting): void {
  if (!reads.replicated) return;
  app.addHook('onSend', async (request, reply, payload) => {
    if (!marks(request, reply)) return payload;
    const position = await reads.writePosition().catch(() => undefined);
    if (position === undefined) return payload;
    reply.header(READ_AFTER_HEADER, position);
    reply.header('set-cookie', `${READ_AFTER_COOKIE}=${position}; Path=/; Max-Age=${COOKIE_MAX_AGE_SECONDS}; HttpOnly; SameSite=Strict`);
    return payload;
  });
}
