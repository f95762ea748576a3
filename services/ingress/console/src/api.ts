// The console's only way to the server: the same /v1 routes and bearer token as the CLI. The token
// lives in sessionStorage (gone when the tab closes) and only ever travels in the Authorization
// header, never in a URL.

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

/** Called when the server refuses the token mid-session: the app shows the sign-in again. */
let onUnauthorized: (message: string) => void = () => undefined;
export function whenUnauthorized(handler: (message: string) => void): void {
  onUnauthorized = handler;
}

async function errorOf(response: Response): Promise<ApiError> {
  try {
    const body = (await response.json()) as { error?: { code?: string; message?: string; field?: string } };
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
  const headers: Record<string, string> = { ...(token === '' ? {} : { authorization: `Bearer ${token}` }), accept: 'application/json' };
  if (body !== undefined) headers['content-type'] = 'application/json';
  const response = await fetch(path, { method, headers, body: body === undefined ? null : JSON.stringify(body), credentials: 'omit', cache: 'no-store' });
  if (!response.ok) throw await errorOf(response);
  if (response.status === 204) return undefined as T;
  return (await response.json()) as T;
}

/** A call with the stored token; a 401 forgets it and sends the person back to sign in. */
export async function api<T>(method: string, path: string, body?: unknown): Promise<T> {
  const token = storedToken() ?? (openApi ? '' : null);
  if (token === null) {
    onUnauthorized('Sign in with the API token.');
    throw new ApiError(401, 'unauthorized', 'not signed in');
  }
  try {
    return await callWith<T>(token, method, path, body);
  } catch (error) {
    if (error instanceof ApiError && error.status === 401) {
      forgetToken();
      onUnauthorized('The server no longer accepts this token. Sign in again.');
    }
    throw error;
  }
}

/**
 * A request answered with a server-sent event stream (the token in its header, like every call):
 * the open response, or an ApiError for a refusal before any stream (a 400 naming the field).
 */
export async function openStream(method: 'GET' | 'POST', path: string, options: { body?: unknown; lastEventId?: string | undefined; signal?: AbortSignal } = {}): Promise<Response> {
  const { body, lastEventId, signal } = options;
  const token = storedToken() ?? (openApi ? '' : null);
  if (token === null) {
    onUnauthorized('Sign in with the API token.');
    throw new ApiError(401, 'unauthorized', 'not signed in');
  }
  const headers: Record<string, string> = { accept: 'text/event-stream', ...(token === '' ? {} : { authorization: `Bearer ${token}` }) };
  if (body !== undefined) headers['content-type'] = 'application/json';
  if (lastEventId !== undefined) headers['last-event-id'] = lastEventId;
  const response = await fetch(path, { method, headers, body: body === undefined ? null : JSON.stringify(body), credentials: 'omit', cache: 'no-store', signal: signal ?? null });
  if (response.ok) return response;
  const error = await errorOf(response);
  if (error.status === 401) {
    forgetToken();
    onUnauthorized('The server no longer accepts this token. Sign in again.');
  }
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
