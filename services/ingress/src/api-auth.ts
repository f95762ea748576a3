import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyRequest } from 'fastify';

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

function matches(candidate: string, token: string): boolean {
  return timingSafeEqual(digest(candidate), digest(token));
}

/** The API's check: `Authorization: Bearer <HERALD_API_TOKEN>`; everything is open without a token. */
export function authorized(request: FastifyRequest, token: string | undefined): boolean {
  if (token === undefined) return true;
  const match = /^Bearer\s+(.+)$/i.exec(request.headers.authorization ?? '');
  return match?.[1] !== undefined && matches(match[1].trim(), token);
}

/**
 * The admin view's check: the bearer token, or HTTP Basic with the token as the password (any user
 * name), which is what a browser can send after its login prompt.
 */
export function authorizedForAdmin(request: FastifyRequest, token: string | undefined): boolean {
  if (authorized(request, token)) return true;
  const match = /^Basic\s+([A-Za-z0-9+/=]+)$/i.exec(request.headers.authorization ?? '');
  if (!match?.[1] || token === undefined) return false;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon !== -1 && matches(decoded.slice(colon + 1), token);
}
