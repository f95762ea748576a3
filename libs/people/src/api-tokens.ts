import { randomBytes, scrypt, timingSafeEqual } from 'node:crypto';
import { sql } from 'kysely';
import { withAudit } from '@herald/audit';
import type { Db } from '@herald/db';
import { PeopleError, requirePerson } from './people-store.ts';

/**
 * Personal API tokens: `hrd_<token id>_<secret>`. The id (public) finds the row; the secret (32
 * random bytes) is checked against a scrypt hash with the token's own salt, compared in constant
 * time. The database never holds the secret, so a copy of it opens nothing. The secret carries
 * 256 bits of chance, so a modest scrypt cost is enough and keeps every request cheap.
 */
const PREFIX = 'hrd_';
const TOKEN_PATTERN = /^hrd_([0-9a-f]{32})_([A-Za-z0-9_-]{43})$/;
const SCRYPT = { N: 1024, r: 8, p: 1 } as const;
const HASH_BYTES = 32;
/** last_used_at is written at most this often per token: a busy client is not a write per request. */
const LAST_USE_RESOLUTION_MS = 60_000;

function hashSecret(secret: string, salt: Buffer): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    scrypt(secret, salt, HASH_BYTES, SCRYPT, (error, key) => (error ? reject(error) : resolve(key)));
  });
}

const hexId = (id: string) => id.replace(/-/g, '');
const uuidOf = (hex: string) => `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;

export interface TokenView {
  id: string;
  personId: string;
  name: string;
  createdAt: Date;
  expiresAt: Date | null;
  lastUsedAt: Date | null;
  revokedAt: Date | null;
}

export interface CreatedToken extends TokenView {
  /** The token itself: shown once, never stored. */
  token: string;
}

/** `30d`, `12h`, `90m` → milliseconds; undefined when it is not a duration. */
export function parseDuration(text: string): number | undefined {
  const match = /^([1-9][0-9]{0,5})([mhdw])$/.exec(text.trim());
  if (!match) return undefined;
  const unit = { m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 }[match[2] as 'm' | 'h' | 'd' | 'w'];
  return Number(match[1]) * unit;
}

export interface NewToken {
  personId: string;
  name?: string | undefined;
  /** From now; undefined: no expiry. */
  expiresInMs?: number | undefined;
  /** At most this many live tokens per person (HERALD_TOKENS_PER_PERSON). */
  maxPerPerson: number;
}

function view(row: { id: string; person_id: string; name: string; created_at: Date; expires_at: Date | null; last_used_at: Date | null; revoked_at: Date | null }): TokenView {
  return { id: row.id, personId: row.person_id, name: row.name, createdAt: row.created_at, expiresAt: row.expires_at, lastUsedAt: row.last_used_at, revokedAt: row.revoked_at };
}

/** Creates a token; the limit is checked under a lock on the person, so parallel requests cannot pass it. */
export async function createToken(db: Db, input: NewToken, actor: string): Promise<CreatedToken> {
  await requirePerson(db, input.personId);
  const name = (input.name ?? '').trim();
  if (name.length > 100 || /[\0\n\r]/.test(name)) throw new PeopleError(400, 'name: expected at most 100 characters on one line', 'name');
  const secret = randomBytes(32).toString('base64url');
  const salt = randomBytes(16);
  const hash = await hashSecret(secret, salt);
  const row = await withAudit(db, async (trx) => {
    await trx.selectFrom('people').select('id').where('id', '=', input.personId).forUpdate().executeTakeFirstOrThrow();
    const live = await trx
      .selectFrom('api_tokens')
      .select((eb) => eb.fn.countAll<string>().as('count'))
      .where('person_id', '=', input.personId)
      .where('revoked_at', 'is', null)
      .where((eb) => eb.or([eb('expires_at', 'is', null), eb('expires_at', '>', sql<Date>`now()`)]))
      .executeTakeFirstOrThrow();
    if (Number(live.count) >= input.maxPerPerson) {
      throw new PeopleError(409, `person: already holds ${live.count} tokens, the most HERALD_TOKENS_PER_PERSON allows; revoke one first`, 'person_id');
    }
    const inserted = await trx
      .insertInto('api_tokens')
      .values({
        person_id: input.personId,
        name,
        salt,
        hash,
        expires_at: input.expiresInMs === undefined ? null : sql<Date>`now() + make_interval(secs => ${input.expiresInMs / 1000}::double precision)`,
      })
      .returningAll()
      .executeTakeFirstOrThrow();
    return { result: inserted, audit: { kind: 'admin_change', actor, subject: `person:${input.personId}`, detail: { action: 'token-create', token_id: inserted.id } } };
  });
  return { ...view(row), token: `${PREFIX}${hexId(row.id)}_${secret}` };
}

/** The person a presented token belongs to, when it is well-formed, known, unexpired, unrevoked and its secret matches. */
export async function verifyToken(db: Db, presented: string): Promise<{ personId: string; tokenId: string } | undefined> {
  const match = TOKEN_PATTERN.exec(presented);
  if (!match?.[1] || !match[2]) return undefined;
  const id = uuidOf(match[1]);
  const row = await db
    .selectFrom('api_tokens')
    .select(['id', 'person_id', 'salt', 'hash', 'last_used_at', sql<boolean>`revoked_at IS NULL AND (expires_at IS NULL OR expires_at > now())`.as('live')])
    .where('id', '=', id)
    .executeTakeFirst();
  // An unknown id still costs a hash, so timing does not tell which ids exist.
  const hash = await hashSecret(match[2], row?.salt ?? Buffer.alloc(16));
  if (!row || !row.live || row.hash.length !== hash.length || !timingSafeEqual(row.hash, hash)) return undefined;
  if (row.last_used_at === null || Date.now() - row.last_used_at.getTime() > LAST_USE_RESOLUTION_MS) {
    await db
      .updateTable('api_tokens')
      .set({ last_used_at: sql`now()` })
      .where('id', '=', row.id)
      .execute();
  }
  return { personId: row.person_id, tokenId: row.id };
}

export async function listTokens(db: Db, personId: string): Promise<TokenView[]> {
  const rows = await db
    .selectFrom('api_tokens')
    .select(['id', 'person_id', 'name', 'created_at', 'expires_at', 'last_used_at', 'revoked_at'])
    .where('person_id', '=', personId)
    .orderBy('created_at')
    .execute();
  return rows.map(view);
}

export async function getToken(db: Db, id: string): Promise<TokenView | undefined> {
  if (!/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i.test(id)) return undefined;
  const row = await db.selectFrom('api_tokens').select(['id', 'person_id', 'name', 'created_at', 'expires_at', 'last_used_at', 'revoked_at']).where('id', '=', id).executeTakeFirst();
  return row ? view(row) : undefined;
}

/** Revokes a token at once (the next request with it is a 401); revoking twice is a no-op. */
export async function revokeToken(db: Db, id: string, actor: string): Promise<TokenView> {
  const token = await getToken(db, id);
  if (!token) throw new PeopleError(404, `token ${id}: not found`, 'id');
  return withAudit(db, async (trx) => {
    const row = await trx
      .updateTable('api_tokens')
      .set({ revoked_at: sql`coalesce(revoked_at, now())` })
      .where('id', '=', id)
      .returning(['id', 'person_id', 'name', 'created_at', 'expires_at', 'last_used_at', 'revoked_at'])
      .executeTakeFirstOrThrow();
    return { result: view(row), audit: { kind: 'admin_change', actor, subject: `person:${token.personId}`, detail: { action: 'token-revoke', token_id: id } } };
  });
}
