const CONNECTION_MESSAGES =
  /Connection terminated|ECONNREFUSED|ECONNRESET|ETIMEDOUT|EPIPE|timeout exceeded when trying to connect|Client has encountered a connection error|the database system is (starting up|shutting down|in recovery)/i;

/**
 * True for failures of the storage connection itself (Postgres restarted, connections terminated,
 * network gone): the work is handed back and retried, not answered with an error.
 */
export function isConnectionError(error: unknown): boolean {
  const e = error as { code?: unknown; message?: unknown } | null;
  if (typeof e?.code === 'string' && (/^08/.test(e.code) || /^57P0[123]$/.test(e.code))) return true;
  return typeof e?.message === 'string' && CONNECTION_MESSAGES.test(e.message);
}
