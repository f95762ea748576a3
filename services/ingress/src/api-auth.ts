import { createHash, timingSafeEqual } from 'node:crypto';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { adminExists, BOOTSTRAP_PRINCIPAL, consoleSessionOf, getPerson, principalOf, verifyToken } from '@herald/people';
import type { ConsoleSession, Principal } from '@herald/people';
import type { Db, ProfileCache } from '@herald/db';
import { CONSOLE_ROUTES } from './console-routes.ts';
import { sendError } from './api-errors.ts';
import { PLATFORM_EVENT_ROUTES } from '@herald/core';
import { ADMIN_VIEW_PATH, routePermission } from './route-permissions.ts';
import { changesState, cookieOf, CSRF_HEADER, SESSION_COOKIE } from './console-cookies.ts';
import { PUBLIC_SIGN_IN_ROUTES } from './signin-paths.ts';
import type { RoutePermission } from './route-permissions.ts';
import { guardRoute } from './route-guard.ts';

export { ADMIN_VIEW_PATH } from './route-permissions.ts';

function digest(value: string): Buffer {
  return createHash('sha256').update(value).digest();
}

function matches(candidate: string, token: string): boolean {
  return timingSafeEqual(digest(candidate), digest(token));
}

/** The bearer credential of a request, if any. */
function bearerOf(request: FastifyRequest): string | undefined {
  const match = /^Bearer\s+(.+)$/i.exec(request.headers.authorization ?? '');
  return match?.[1]?.trim();
}

/** The password of HTTP Basic, which is what a browser can send after its login prompt (the admin view). */
function basicPasswordOf(request: FastifyRequest): string | undefined {
  const match = /^Basic\s+([A-Za-z0-9+/=]+)$/i.exec(request.headers.authorization ?? '');
  if (!match?.[1]) return undefined;
  const decoded = Buffer.from(match[1], 'base64').toString('utf8');
  const colon = decoded.indexOf(':');
  return colon === -1 ? undefined : decoded.slice(colon + 1);
}

/** The API's check of the bootstrap token: `Authorization: Bearer <HERALD_API_TOKEN>`; everything is open without a token. */
export function authorized(request: FastifyRequest, token: string | undefined): boolean {
  if (token === undefined) return true;
  const bearer = bearerOf(request);
  return bearer !== undefined && matches(bearer, token);
}

/**
 * The routes anyone may call: the probes, the Prometheus scrape (docs/operations.md: route only /v1
 * and the webhooks to the internet), the Telegram webhook, which checks its own secret header, and
 * the console's static files (a browser cannot send the token to load a page; every call the page
 * then makes needs it). Every other route needs a token: route-permissions.ts says which role.
 */
export const PUBLIC_ROUTES: readonly string[] = ['/healthz', '/readyz', '/metrics', ...PLATFORM_EVENT_ROUTES, ...CONSOLE_ROUTES, ...PUBLIC_SIGN_IN_ROUTES];

export type RouteAccess = 'public' | 'admin' | 'token';

/** How a registered route is authenticated, decided once from its pattern (what the router matched). */
export function routeAccess(pattern: string): RouteAccess {
  if (PUBLIC_ROUTES.includes(pattern)) return 'public';
  if (pattern === ADMIN_VIEW_PATH || pattern.startsWith(`${ADMIN_VIEW_PATH}/`)) return 'admin';
  return 'token';
}

export interface RegisteredRoute {
  method: string;
  url: string;
  access: RouteAccess;
  /** Whether ROUTE_PERMISSIONS has its entry (test/security/people-route-matrix.test.ts checks every route has). */
  listed: boolean;
}

/** A route's permission: public through PUBLIC_ROUTES, else its entry in ROUTE_PERMISSIONS. */
function permissionOf(method: string, pattern: string): RoutePermission | undefined {
  return PUBLIC_ROUTES.includes(pattern) ? { need: 'public', resource: 'none' } : routePermission(method, pattern);
}

/** A route missing from ROUTE_PERMISSIONS: only an admin of every profile may call it (deny by default). */
const UNLISTED: RoutePermission = { need: 'admin', resource: 'none' };

const ROUTES = new WeakMap<FastifyInstance, RegisteredRoute[]>();

/** Every route the server registered, with its guard (what the auth tests walk). */
export function registeredRoutes(app: FastifyInstance): readonly RegisteredRoute[] {
  return ROUTES.get(app) ?? [];
}

declare module 'fastify' {
  interface FastifyRequest {
    /** Who is calling (set for every non-public route before its handler runs). */
    principal: Principal | null;
    /** The console session the caller signed in with, when it was the cookie and not a bearer token. */
    consoleSession: ConsoleSession | null;
  }
}

/** The caller of a guarded route; the bootstrap principal where none was set (never on a guarded route). */
export function principalOfRequest(request: FastifyRequest): Principal {
  return request.principal ?? BOOTSTRAP_PRINCIPAL;
}

export interface AuthOptions {
  db: Db;
  /** HERALD_API_TOKEN: the bootstrap admin; undefined: the API is open on loopback, as the bootstrap admin. */
  token: string | undefined;
  /** HERALD_API_TOKEN_DISABLED: the bootstrap token is refused once an admin person exists. */
  bootstrapTokenDisabled: boolean;
  /** HERALD_OPERATORS: identities that hold an operator grant. */
  operators: readonly string[];
  /** The process's profile cache: the person keys the guard resolves are kept there. */
  profiles?: ProfileCache | undefined;
}

/** Who a credential names: the bootstrap token, a personal token, or nobody (undefined). */
async function principalFor(options: AuthOptions, credential: string | undefined): Promise<Principal | undefined> {
  if (credential === undefined) return options.token === undefined ? BOOTSTRAP_PRINCIPAL : undefined;
  if (options.token !== undefined && matches(credential, options.token)) {
    if (options.bootstrapTokenDisabled && (await adminExists(options.db))) return undefined;
    return BOOTSTRAP_PRINCIPAL;
  }
  const verified = await verifyToken(options.db, credential);
  if (!verified) return options.token === undefined && !credential.startsWith('hrd_') ? BOOTSTRAP_PRINCIPAL : undefined;
  const person = await getPerson(options.db, verified.personId);
  return person ? principalOf(person, options.operators, verified.tokenId) : undefined;
}

/**
 * The principal of a console session cookie, 'csrf' for a state-changing call without the session's
 * CSRF token (a form another site made the browser send carries the cookie but cannot know the token),
 * or undefined for a cookie that names no live session.
 */
async function cookiePrincipal(options: AuthOptions, request: FastifyRequest): Promise<Principal | 'csrf' | undefined> {
  const session = await consoleSessionOf(options.db, cookieOf(request, SESSION_COOKIE) ?? '');
  if (!session) return undefined;
  const sent = request.headers[CSRF_HEADER];
  if (changesState(request.method) && (typeof sent !== 'string' || !matches(sent, session.csrfToken))) return 'csrf';
  const person = await getPerson(options.db, session.personId);
  if (!person) return undefined;
  request.consoleSession = session;
  return principalOf(person, options.operators);
}

const UNAUTHORIZED = 'missing or wrong bearer token (Authorization: Bearer <personal token or HERALD_API_TOKEN>)';

/**
 * One auth decision for every route, on the route the router matched: the router decodes
 * percent-escapes (`/%761/messages` is `/v1/messages`), so a check on the raw URL can be walked
 * around and this one cannot. First who is calling (onRequest: 401), then whether they may
 * (preHandler, with the parsed params, query and body: 403 for a role that never may, 404 for a
 * resource that is not theirs). Deny by default: a route without an entry in ROUTE_PERMISSIONS
 * is open to an admin of every profile only, and the route matrix test fails on it. Install
 * before registering routes.
 */
export function installAuth(app: FastifyInstance, options: AuthOptions): void {
  const routes: RegisteredRoute[] = [];
  ROUTES.set(app, routes);
  app.decorateRequest('principal', null);
  app.decorateRequest('consoleSession', null);
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) routes.push({ method, url: route.url, access: routeAccess(route.url), listed: permissionOf(method, route.url) !== undefined });
  });
  app.addHook('onRequest', async (request, reply) => {
    const pattern = request.routeOptions.url;
    if (pattern === undefined) return undefined;
    const access = routeAccess(pattern);
    if (access === 'public') return undefined;
    const credential = bearerOf(request) ?? (access === 'admin' ? basicPasswordOf(request) : undefined);
    if (credential === undefined && cookieOf(request, SESSION_COOKIE) !== undefined) {
      const signedIn = await cookiePrincipal(options, request);
      if (signedIn === 'csrf') return sendError(reply, 403, 'forbidden', `a console call that changes something must send the session's CSRF token in ${CSRF_HEADER} (GET /v1/auth/session gives it)`);
      if (signedIn) {
        request.principal = signedIn;
        return undefined;
      }
    }
    const principal = await principalFor(options, credential);
    if (principal) {
      request.principal = principal;
      return undefined;
    }
    if (access === 'admin') {
      reply.header('www-authenticate', 'Basic realm="Herald admin", charset="UTF-8"');
      return sendError(reply, 401, 'unauthorized', 'the admin view needs an admin token: Authorization: Bearer <token>, or any user name with the token as the password');
    }
    return sendError(reply, 401, 'unauthorized', UNAUTHORIZED);
  });
  app.addHook('preHandler', async (request, reply) => {
    const pattern = request.routeOptions.url;
    if (pattern === undefined || request.principal === null) return undefined;
    const permission = permissionOf(request.method, pattern) ?? UNLISTED;
    return guardRoute({ db: options.db, profiles: options.profiles, request, reply, permission, principal: request.principal });
  });
}
