import { createHash, randomBytes } from 'node:crypto';
import type { Db } from '@herald/db';

/**
 * The console's signed-in sessions: a random secret in the browser's HttpOnly cookie, its SHA-256
 * here (a 32-byte random secret needs no slow hash: nothing to guess), a CSRF token the page sends
 * back in a header, and an expiry the server enforces. Signing out deletes the row, so a copied
 * cookie stops working at once.
 */
export interface ConsoleSession {
  personId: string;
  csrfToken: string;
  via: 'token' | 'oidc';
  expiresAt: Date;
}

export interface NewConsoleSession extends ConsoleSession {
  /** The cookie's value: shown to the browser once, never stored. */
  secret: string;
}

const hashOf = (secret: string) => createHash('sha256').update(secret).digest();

/** Seen-at is written at most this often per session: a page polling every second writes nothing. */
const SEEN_EVERY_MS = 60_000;

export async function startConsoleSession(db: Db, personId: string, via: 'token' | 'oidc', hours: number): Promise<NewConsoleSession> {
  const secret = randomBytes(32).toString('base64url');
  const csrfToken = randomBytes(24).toString('base64url');
  const expiresAt = new Date(Date.now() + hours * 3_600_000);
  await db
    .insertInto('console_sessions')
    .values({ secret_hash: hashOf(secret), person_id: personId, csrf_token: csrfToken, via, expires_at: expiresAt })
    .execute();
  return { secret, personId, csrfToken, via, expiresAt };
}

/** The live session a cookie names, or undefined (unknown, signed out or expired). */
export async function consoleSessionOf(db: Db, secret: string): Promise<ConsoleSession | undefined> {
  if (secret.length < 16 || secret.length > 128) return undefined;
  const hash = hashOf(secret);
  const row = await db.selectFrom('console_sessions').select(['person_id', 'csrf_token', 'via', 'expires_at', 'last_seen_at']).where('secret_hash', '=', hash).executeTakeFirst();
  if (!row || row.expires_at.getTime() <= Date.now()) return undefined;
  if (Date.now() - row.last_seen_at.getTime() > SEEN_EVERY_MS) await db.updateTable('console_sessions').set({ last_seen_at: new Date() }).where('secret_hash', '=', hash).execute();
  return { personId: row.person_id, csrfToken: row.csrf_token, via: row.via as 'token' | 'oidc', expiresAt: row.expires_at };
}

/** Signs out: the row goes, and with it the cookie's power. Expired rows of anyone go too. */
export async function endConsoleSession(db: Db, secret: string): Promise<void> {
  await db
    .deleteFrom('console_sessions')
    .where((eb) => eb.or([eb('secret_hash', '=', hashOf(secret)), eb('expires_at', '<', new Date())]))
    .execute();
}
