// The console's only way to the server: the same /v1 routes as the CLI, with the API token or a
// person's console session. The API token lives in sessionStorage (gone when the tab closes) and
// only ever travels in the Authorization header, never in a URL; a person's session is an HttpOnly
// cookie the page never sees, with a CSRF token sent on every change.

import type { ErrorBody } from '../../src/contracts/common.ts';
import type { SignedInView, SignInMethods } from '../../src/contracts/signin-views.ts';

const TOKEN_KEY = 'herald.token';

export class ApiError extends Error {
  readonly status: number;
  readonly code: string;
  readonly field: string | undefined;
  constructor(status: number, code: string, message: string, field?: string) {
    super(message);
    this.status = status;
    this.code = code;
    this.field = field;
  }
}

export function storedToken(): string | null {
  return sessionStorage.getItem(TOKEN_KEY);
}

export function storeToken(token: string): void {
  sessionStorage.setItem(TOKEN_KEY, token);
}

export function forgetToken(): void {
  sessionStorage.removeItem(TOKEN_KEY);
}

/**
 * A person signed in with a personal token or single sign-on holds an HttpOnly session cookie the
 * page cannot read; what the page keeps is the session's CSRF token (sent on every change) and the
 * roles, to show only what they allow. Null: no cookie session (the API token, or an open API).
 */
export interface CookieSession {
  csrf: string;
  name: string;
  roles: string[];
}

let cookieSession: CookieSession | null = null;

export function currentCookieSession(): CookieSession | null {
  return cookieSession;
}

function remember(answer: SignedInView): CookieSession | null {
  cookieSession = answer.csrf_token === null || answer.person === null ? null : { csrf: answer.csrf_token, name: answer.person.display_name, roles: answer.grants.map((grant) => grant.role) };
  return cookieSession;
}

/** Asks once at load whether the browser holds a console session (its cookie rides along by itself). */
export async function probeCookieSession(): Promise<CookieSession | null> {
  try {
    const response = await fetch('/v1/auth/session', { headers: { accept: 'application/json' }, credentials: 'same-origin', cache: 'no-store' });
    return response.ok ? remember((await response.json()) as SignedInView) : null;
  } catch {
    return null;
  }
}

/** Signs in with a personal token: the server answers with the session cookie and its CSRF token. */
export async function signInWithPersonalToken(token: string): Promise<CookieSession | null> {
  return remember(await callWith<SignedInView>('', 'POST', '/v1/auth/sign-in', { token }));
}

/** Ends the console session on the server (the cookie stops working everywhere at once). */
export async function endCookieSession(): Promise<void> {
  if (cookieSession === null) return;
  await callWith('', 'DELETE', '/v1/auth/session').catch(() => undefined);
  cookieSession = null;
}

/** Whether single sign-on is offered here. */
export async function singleSignOnOffered(): Promise<boolean> {
  try {
    const response = await fetch('/v1/auth/methods', { headers: { accept: 'application/json' }, cache: 'no-store' });
    return response.ok && ((await response.json()) as SignInMethods).oidc;
  } catch {
    return false;
  }
}

/** Headers every call carries: the API token when signed in with it, the CSRF token on a change in a cookie session. */
function authHeaders(token: string, method: string): Record<string, string> {
  const headers: Record<string, string> = token === '' ? {} : { authorization: `Bearer ${token}` };
  if (cookieSession !== null && !['GET', 'HEAD'].includes(method)) headers['x-herald-csrf'] = cookieSession.csrf;
  return headers;
}

/** The token a call sends: the stored API token, none for a cookie session or an open API, null when signed out. */
function currentToken(): string | null {
  return storedToken() ?? (cookieSession !== null || openApi ? '' : null);
}

/** Called when the server refuses the token mid-session: the app shows the sign-in again. */
let onUnauthorized: (message: string) => void = () => undefined;
export function whenUnauthorized(handler: (message: string) => void): void {
  onUnauthorized = handler;
}

async function errorOf(response: Response): Promise<ApiError> {
  try {
    // Partial: a proxy or a load balancer in front may answer with a body of its own.
    const body = (await response.json()) as Partial<ErrorBody>;
    return new ApiError(response.status, body.error?.code ?? 'error', body.error?.message ?? response.statusText, body.error?.field);
  } catch {
    return new ApiError(response.status, 'error', `${response.status} ${response.statusText}`);
  }
}

/**
 * The server has no API token (HERALD_API_TOKEN unset): it then listens on loopback only and takes
 * calls without one, so the console signs nobody in. Found once at load.
 */
let openApi = false;

export function isOpenApi(): boolean {
  return openApi;
}

/** Asks the server whether it takes calls without a token; true only on a 2xx to a tokenless call. */
export async function probeOpenApi(): Promise<boolean> {
  try {
    const response = await fetch('/v1/admin/status', { headers: { accept: 'application/json' }, credentials: 'omit', cache: 'no-store' });
    openApi = response.ok;
  } catch {
    openApi = false;
  }
  return openApi;
}

/** One call with an explicit token (none when it is empty: an open API); the sign-in's check before the token is kept. */
export async function callWith<T>(token: string, method: string, path: string, body?: unknown): Promise<T> {
  const headers: Record<string, string> = { ...authHeaders(token, method), accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(path, { method, headers, body: body === undefined ? null : JSON.stringify(body), credentials: 'same-origin', cache: 'no-store' });
  if (!response.ok) throw await errorOf(response);
  if (response.status === 204) return undefined as T;
  return (await response.json()) as T;
}

/** The token to call with, or (signed out) the sign-in shown again and an ApiError thrown. */
function tokenOrSignIn(): string {
  const token = currentToken();
  if (token !== null) return token;
  onUnauthorized('Sign in with the API token.');
  throw new ApiError(401, 'unauthorized', 'not signed in');
}

/** A 401 mid-session: the sign-in is forgotten and the person sent back to sign in. */
function signInRefused(error: unknown): void {
  if (!(error instanceof ApiError) || error.status !== 401) return;
  forgetToken();
  cookieSession = null;
  onUnauthorized('The server no longer accepts this sign-in. Sign in again.');
}

/** A call with the stored token; a 401 forgets it and sends the person back to sign in. */
export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const token = tokenOrSignIn();
  try {
    return await callWith<T>(token, method, path, body);
  } catch (error) {
    signInRefused(error);
    throw error;
  }
}

/**
 * A file's bytes (a transcript's attachment), fetched with the same sign-in as every call, the
 * token in its header or the cookie riding along: never by a URL the browser loads by itself.
 */
export async function fetchFile(path: string): Promise<Blob> {
  const token = tokenOrSignIn();
  const response = await fetch(path, { headers: authHeaders(token, 'GET'), credentials: 'same-origin', cache: 'no-store' });
  if (response.ok) return response.blob();
  const error = await errorOf(response);
  signInRefused(error);
  throw error;
}

/**
 * A request answered with a server-sent event stream (the token in its header, like every call):
 * the open response, or an ApiError for a refusal before any stream (a 400 naming the field).
 */
export async function openStream(method: 'GET' | 'POST', path: string, options: { body?: unknown; lastEventId?: string | undefined; signal?: AbortSignal } = {}): Promise<Response> {
  const { body, lastEventId, signal } = options;
  const token = tokenOrSignIn();
  const headers: Record<string, string> = { accept: 'text/event-stream', ...authHeaders(token, method) };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (lastEventId !== undefined) headers['last-event-id'] = lastEventId;
  const response = await fetch(path, { method, headers, body: body === undefined ? null : JSON.stringify(body), credentials: 'same-origin', cache: 'no-store', signal: signal ?? null });
  if (response.ok) return response;
  const error = await errorOf(response);
  signInRefused(error);
  throw error;
}

/** A query string from the defined, non-empty values, each percent-encoded. */
export function query(params: Record<string, string | number | undefined | null>): string {
  const search = new URLSearchParams();
  for (const [key, value] of Object.entries(params)) if (value !== undefined && value !== null && value !== '') search.set(key, String(value));
  const text = search.toString();
  return text === '' ? '' : `?${text}`;
}

/** A path segment from data (a skill name, a person id), percent-encoded so it cannot add segments. */
export function segment(value: string): string {
  return encodeURIComponent(value);
}
