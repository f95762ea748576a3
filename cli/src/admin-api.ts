import type { Config } from '@herald/core';

/**
 * GET from the cluster's API (HERALD_URL, with HERALD_API_TOKEN) for an operator command: the
 * parsed JSON, or the exit code after the reason went to stderr.
 */
export async function getFromApi<T>(config: Config, path: string, command: string): Promise<T | number> {
  let response: Response;
  try {
    response = await fetch(`${config.api.url}${path}`, {
      headers: config.api.token === undefined ? {} : { authorization: `Bearer ${config.api.token}` },
      signal: AbortSignal.timeout(10_000),
    });
  } catch (error) {
    process.stderr.write(`herald ${command}: cannot reach the API at ${config.api.url} (${(error as Error).message}); set HERALD_URL\n`);
    return 1;
  }
  if (!response.ok) {
    process.stderr.write(`herald ${command}: the API answered ${response.status}${response.status === 401 ? ' (set HERALD_API_TOKEN)' : ''}\n`);
    return 1;
  }
  return (await response.json()) as T;
}

/** PUT or DELETE on the cluster's API for an operator command: the JSON answer (null for a 204), or the exit code after the reason went to stderr. */
export async function sendToApi<T>(config: Config, method: 'PUT' | 'DELETE', path: string, command: string, body?: unknown): Promise<T | null | number> {
  let response: Response;
  try {
    response = await fetch(`${config.api.url}${path}`, {
      method,
      headers: { ...(config.api.token === undefined ? {} : { authorization: `Bearer ${config.api.token}` }), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      signal: AbortSignal.timeout(10_000),
    });
  } catch (error) {
    process.stderr.write(`herald ${command}: cannot reach the API at ${config.api.url} (${(error as Error).message}); set HERALD_URL\n`);
    return 1;
  }
  if (response.status === 204) return null;
  const answer = (await response.json().catch(() => ({}))) as T & { error?: { message?: string } };
  if (!response.ok) {
    process.stderr.write(`herald ${command}: the API answered ${response.status}: ${answer.error?.message ?? 'unexpected answer'}\n`);
    return 1;
  }
  return answer;
}
