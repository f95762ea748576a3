import type { FastifyReply, FastifyRequest } from 'fastify';

/**
 * The console's cookies. The session cookie is HttpOnly (no script reads it), SameSite=Strict (no
 * other site's page sends it) and Secure when Herald is served over https (HERALD_URL); the pending
 * sign-in cookie is SameSite=Lax, because the identity provider's redirect back is a cross-site
 * navigation that a Strict cookie would not ride on, and it lives ten minutes on one path.
 */
export const SESSION_COOKIE = 'herald_session';
export const PENDING_COOKIE = 'herald_oidc';
export const CALLBACK_PATH = '/v1/auth/oidc/callback';
/** The header a cookie-signed-in page sends its CSRF token in, on every state-changing call. */
export const CSRF_HEADER = 'x-herald-csrf';

/** One cookie of the request, undefined when absent or not decodable. */
export function cookieOf(request: FastifyRequest, name: string): string | undefined {
  for (const part of (request.headers.cookie ?? '').split(';')) {
    const eq = part.indexOf('=');
    if (eq === -1 || part.slice(0, eq).trim() !== name) continue;
    try {
      return decodeURIComponent(part.slice(eq + 1).trim());
    } catch {
      return undefined;
    }
  }
  return undefined;
}

export interface CookieOptions {
  secure: boolean;
  sameSite: 'Strict' | 'Lax';
  path: string;
  /** Seconds; 0 removes the cookie. */
  maxAge: number;
}

/** Adds one Set-Cookie header (several may be set on one answer). */
export function setCookie(reply: FastifyReply, name: string, value: string, options: CookieOptions): void {
  const parts = [`${name}=${encodeURIComponent(value)}`, `Path=${options.path}`, `Max-Age=${options.maxAge}`, 'HttpOnly', `SameSite=${options.sameSite}`];
  if (options.secure) parts.push('Secure');
  const previous = reply.getHeader('set-cookie');
  const list = previous === undefined ? [] : Array.isArray(previous) ? previous.map(String) : [String(previous)];
  reply.header('set-cookie', [...list, parts.join('; ')]);
}

/** GET, HEAD and OPTIONS change nothing; every other method must prove it came from the console's page. */
export function changesState(method: string): boolean {
  return !['GET', 'HEAD', 'OPTIONS'].includes(method.toUpperCase());
}
