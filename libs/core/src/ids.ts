import { z } from 'zod';

/**
 * The one definition of an id Herald hands out (sessions, events, waits, turns, reviews, cron jobs
 * and runs): a UUID in its 8-4-4-4-12 hex form. Anything else is malformed (400), never sent to
 * Postgres, where a uuid cast of it would fail as a 500.
 */
export const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: unknown): value is string {
  return typeof value === 'string' && UUID_PATTERN.test(value);
}

/** The same rule for zod schemas (query strings, bodies). */
export const uuidSchema = z.string().regex(UUID_PATTERN, { error: 'expected an id (a UUID)' });
