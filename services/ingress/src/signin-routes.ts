import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { ConfigError } from '@herald/core';
import type { Logger, SignInConfig } from '@herald/core';
import type { Db } from '@herald/db';
import { endConsoleSession, getPerson, startConsoleSession, verifyToken } from '@herald/people';
import type { Principal } from '@herald/people';
import { principalOfRequest } from './api-auth.ts';
import { sendError, sendInvalid } from './api-errors.ts';
import { CALLBACK_PATH, cookieOf, PENDING_COOKIE, SESSION_COOKIE, setCookie } from './console-cookies.ts';
import { noContent } from './contracts/common.ts';
import { withContract } from './contracts/route-contract.ts';
import { signInMethods, signedInView } from './contracts/signin-views.ts';
import { OidcClient, PENDING_SIGN_IN_MS, SignInRefused } from './oidc-client.ts';
import { personOfSignIn, unknownOidcRoles } from './oidc-people.ts';

export interface SignInOptions {
  db: Db;
  logger: Logger;
  signIn: SignInConfig;
  /** HERALD_URL: where the browser reaches Herald (the callback's address; https makes cookies Secure). */
  publicUrl: string;
}

/** Where the console lives; a finished or refused sign-in lands there. */
const CONSOLE_PATH = '/ui/';
const tokenSignIn = z.strictObject({ token: z.string({ error: 'is required' }).min(1).max(512) });

/**
 * Console sign-in: a personal token or single sign-on through an OpenID provider, either ending in
 * a server-side console session held by an HttpOnly cookie (console-cookies.ts), and signing out.
 */
export function registerSignInRoutes(app: FastifyInstance, options: SignInOptions): void {
  const unknown = unknownOidcRoles(options.signIn.oidc);
  if (unknown.length > 0) throw new ConfigError(`HERALD_OIDC_ROLES: ${unknown.join(', ')} is not a role (expected admin, operator, member or viewer)`);
  const secure = options.publicUrl.startsWith('https:');
  const hours = options.signIn.consoleSessionHours;
  const sessionCookie = (reply: FastifyReply, value: string, maxAge: number) => setCookie(reply, SESSION_COOKIE, value, { secure, sameSite: 'Strict', path: '/', maxAge });
  const oidc = options.signIn.oidc ? lazyOidc(options) : undefined;

  app.get('/v1/auth/methods', withContract({ summary: 'How a person can sign in to the console', tags: ['sign-in'], response: { 200: signInMethods } }), async () => ({
    token: true,
    oidc: oidc !== undefined,
  }));

  app.post(
    '/v1/auth/sign-in',
    withContract({ summary: 'Sign in to the console with a personal token', tags: ['sign-in'], body: tokenSignIn, response: { 200: signedInView } }),
    async (request, reply) => {
      const body = tokenSignIn.safeParse(request.body);
      if (!body.success) return sendInvalid(reply, body.error);
      const verified = await verifyToken(options.db, body.data.token);
      const person = verified ? await getPerson(options.db, verified.personId) : undefined;
      if (!person) return sendError(reply, 401, 'unauthorized', 'that is not a valid personal token (herald tokens create --person ID makes one)');
      const session = await startConsoleSession(options.db, person.id, 'token', hours);
      sessionCookie(reply, session.secret, hours * 3600);
      return { person: { id: person.id, display_name: person.displayName, key: person.key }, grants: person.grants, csrf_token: session.csrfToken, via: 'token' };
    },
  );

  app.get('/v1/auth/session', withContract({ summary: 'Who is signed in, and the CSRF token for state-changing calls', tags: ['sign-in'], response: { 200: signedInView } }), async (request) =>
    describe(options.db, principalOfRequest(request), request),
  );

  app.delete('/v1/auth/session', withContract({ summary: 'Sign out: the console session ends on the server', tags: ['sign-in'], response: { 204: noContent } }), async (request, reply) => {
    const secret = cookieOf(request, SESSION_COOKIE);
    if (secret !== undefined) await endConsoleSession(options.db, secret);
    sessionCookie(reply, '', 0);
    return reply.code(204).send();
  });

  registerOidcRoutes(app, options, oidc, (reply, value) => sessionCookie(reply, value, hours * 3600), secure);
}

async function describe(db: Db, principal: Principal, request: FastifyRequest) {
  const person = principal.personId === null ? undefined : await getPerson(db, principal.personId);
  return {
    person: person ? { id: person.id, display_name: person.displayName, key: person.key } : null,
    grants: principal.grants.map((grant) => ({ role: grant.role, profiles: [...grant.profiles] })),
    csrf_token: request.consoleSession?.csrfToken ?? null,
    via: request.consoleSession?.via ?? (principal.kind === 'bootstrap' ? 'bootstrap' : 'token'),
  };
}

/** Discovery on first use, so the ingress starts while the provider is down; a failed discovery is tried again next time. */
function lazyOidc(options: SignInOptions): () => Promise<OidcClient> {
  let client: Promise<OidcClient> | undefined;
  return () => {
    client ??= OidcClient.discover(options.signIn.oidc!, new URL(CALLBACK_PATH, options.publicUrl).href).catch((error: unknown) => {
      client = undefined;
      throw error;
    });
    return client;
  };
}

/** Single sign-on's two routes; without a provider configured they say so (404), so the API's shape does not depend on settings. */
function registerOidcRoutes(
  app: FastifyInstance,
  options: SignInOptions,
  client: (() => Promise<OidcClient>) | undefined,
  signedIn: (reply: FastifyReply, secret: string) => void,
  secure: boolean,
): void {
  const off = (reply: FastifyReply) => sendError(reply, 404, 'not_found', 'single sign-on is not configured here (HERALD_OIDC_ISSUER, HERALD_OIDC_CLIENT_ID, HERALD_OIDC_CLIENT_SECRET)');
  const pendingCookie = (reply: FastifyReply, value: string, maxAge: number) => setCookie(reply, PENDING_COOKIE, value, { secure, sameSite: 'Lax', path: CALLBACK_PATH, maxAge });
  const backToConsole = (reply: FastifyReply, error?: string) => reply.redirect(error === undefined ? CONSOLE_PATH : `${CONSOLE_PATH}?signin_error=${encodeURIComponent(error)}`, 303);

  app.get('/v1/auth/oidc/login', withContract({ summary: 'Start single sign-on: a redirect to the OpenID provider', tags: ['sign-in'], response: { 302: z.null() } }), async (_request, reply) => {
    if (!client) return off(reply);
    const { url, cookie } = await (await client()).start();
    pendingCookie(reply, cookie, PENDING_SIGN_IN_MS / 1000);
    return reply.redirect(url, 302);
  });

  app.get('/v1/auth/oidc/callback', withContract({ summary: 'Where the OpenID provider sends the browser back', tags: ['sign-in'], response: { 303: z.null() } }), async (request, reply) => {
    if (!client) return off(reply);
    pendingCookie(reply, '', 0);
    const callback = new URL(request.url, options.publicUrl);
    try {
      const identity = await (await client()).finish(callback, cookieOf(request, PENDING_COOKIE));
      const person = await personOfSignIn(options.db, identity, options.signIn.oidc!);
      const session = await startConsoleSession(options.db, person.id, 'oidc', options.signIn.consoleSessionHours);
      signedIn(reply, session.secret);
      options.logger.info({ person: person.id }, 'console sign-in through the OpenID provider');
      return backToConsole(reply);
    } catch (error) {
      const reason = error instanceof SignInRefused ? error.message : 'the provider did not confirm the sign-in: start again';
      options.logger.warn({ reason, err: error instanceof SignInRefused ? undefined : error }, 'console sign-in refused');
      return backToConsole(reply, reason);
    }
  });
}
