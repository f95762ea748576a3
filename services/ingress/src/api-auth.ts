import { createHash, timingSafeEqual } from 'node:crypto';
import { CONSOLE_ROUTES } from './console-routes.ts';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { sendError } from './api-errors.ts';
import { TELEGRAM_WEBHOOK_PATH } from './platform-routes.ts';
import { PLATFORM_EVENT_ROUTES } from '@herald/core';

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

/**
 * The routes anyone may call: the probes, the Prometheus scrape (docs/operations.md: route only /v1
 * and the webhooks to the internet), the Telegram webhook, which checks its own secret header, and
 * the console's static files (a browser cannot send the token to load a page; every call the page
 * then makes needs it). Every other route needs the token: a route is public only by being listed here.
 */
export const PUBLIC_ROUTES: readonly string[] = ['/healthz', '/readyz', '/metrics', TELEGRAM_WEBHOOK_PATH, ...PLATFORM_EVENT_ROUTES, ...CONSOLE_ROUTES];

/** Bull Board's pages and API: the token as bearer, or as a browser's Basic password. */
export const ADMIN_VIEW_PATH = '/admin/queues';

export type RouteAccess = 'public' | 'admin' | 'token';

/** How a registered route is guarded, decided once from its pattern (what the router matched). */
export function routeAccess(pattern: string): RouteAccess {
  if (PUBLIC_ROUTES.includes(pattern)) return 'public';
  if (pattern === ADMIN_VIEW_PATH || pattern.startsWith(`${ADMIN_VIEW_PATH}/`)) return 'admin';
  return 'token';
}

export interface RegisteredRoute {
  method: string;
  url: string;
  access: RouteAccess;
}

const ROUTES = new WeakMap<FastifyInstance, RegisteredRoute[]>();

/** Every route the server registered, with its guard (what the auth test walks). */
export function registeredRoutes(app: FastifyInstance): readonly RegisteredRoute[] {
  return ROUTES.get(app) ?? [];
}

/**
 * One auth decision for every route, on the route the router matched: the router decodes
 * percent-escapes (`/%761/messages` is `/v1/messages`), so a check on the raw URL can be walked
 * around and this one cannot. Deny by default: a route is public only through PUBLIC_ROUTES. A
 * request that matches no route falls through to the 404. Install before registering routes.
 */
export function installAuth(app: FastifyInstance, token: string | undefined): void {
  const routes: RegisteredRoute[] = [];
  ROUTES.set(app, routes);
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) routes.push({ method, url: route.url, access: routeAccess(route.url) });
  });
  app.addHook('onRequest', async (request, reply) => {
    const pattern = request.routeOptions.url;
    if (pattern === undefined || token === undefined) return undefined;
    const access = routeAccess(pattern);
    if (access === 'public') return undefined;
    if (access === 'admin') {
      if (authorizedForAdmin(request, token)) return undefined;
      reply.header('www-authenticate', 'Basic realm="Herald admin", charset="UTF-8"');
      return sendError(reply, 401, 'unauthorized', 'the admin view needs the API token: Authorization: Bearer <HERALD_API_TOKEN>, or any user name with the token as the password');
    }
    if (authorized(request, token)) return undefined;
    return sendError(reply, 401, 'unauthorized', 'missing or wrong bearer token (Authorization: Bearer <HERALD_API_TOKEN>)');
  });
}
