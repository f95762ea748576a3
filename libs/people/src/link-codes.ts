import { createHash, randomInt } from 'node:crypto';
import { sql } from 'kysely';
import { withAudit } from '@herald/audit';
import type { Db } from '@herald/db';
import { linkIdentity, PeopleError, requirePerson } from './people-store.ts';

/** How long a link code works, and how it is spelled: 8 characters people can type, no 0/O or 1/I. */
export const LINK_CODE_TTL_MS = 10 * 60_000;
const ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
const CODE_LENGTH = 8;

/** Codes are stored hashed: a database reader cannot link their own identity to someone else. */
const hashCode = (code: string) => createHash('sha256').update(code.toUpperCase(), 'utf8').digest();

export interface LinkCode {
  code: string;
  personId: string;
  expiresAt: Date;
}

/** A one-time code for `/link CODE` in a chat; works for 10 minutes. */
export async function createLinkCode(db: Db, personId: string, actor: string): Promise<LinkCode> {
  await requirePerson(db, personId);
  const code = Array.from({ length: CODE_LENGTH }, () => ALPHABET[randomInt(ALPHABET.length)]).join('');
  const row = await withAudit(db, async (trx) => {
    const inserted = await trx
      .insertInto('link_codes')
      .values({ code_hash: hashCode(code), person_id: personId, expires_at: sql<Date>`now() + make_interval(secs => ${LINK_CODE_TTL_MS / 1000}::double precision)` })
      .returning(['expires_at'])
      .executeTakeFirstOrThrow();
    return { result: inserted, audit: { kind: 'admin_change', actor, subject: `person:${personId}`, detail: { action: 'link-code' } } };
  });
  return { code, personId, expiresAt: row.expires_at };
}

export type LinkOutcome = { kind: 'linked'; personId: string; displayName: string } | { kind: 'invalid' } | { kind: 'taken' };

/**
 * Redeems a code for `identity` (the qualified id of whoever sent `/link CODE`): once, before it
 * expires. The code row is locked and marked used in the transaction that links, so two replicas
 * redeeming the same code link at most once.
 */
export async function redeemLinkCode(db: Db, code: string, identity: string): Promise<LinkOutcome> {
  const cleaned = code.trim();
  if (!/^[A-Za-z0-9]{4,32}$/.test(cleaned)) return { kind: 'invalid' };
  try {
    return await withAudit(db, async (trx) => {
      const row = await trx
        .selectFrom('link_codes as c')
        .innerJoin('people as p', 'p.id', 'c.person_id')
        .select(['c.code_hash', 'c.person_id', 'p.display_name'])
        .where('c.code_hash', '=', hashCode(cleaned))
        .where('c.used_at', 'is', null)
        .where('c.expires_at', '>', sql<Date>`now()`)
        .forUpdate()
        .executeTakeFirst();
      if (!row) return { result: { kind: 'invalid' } as LinkOutcome, audit: [] };
      await trx
        .updateTable('link_codes')
        .set({ used_at: sql`now()`, used_by: identity })
        .where('code_hash', '=', row.code_hash)
        .execute();
      await linkIdentity(trx, row.person_id, identity);
      return {
        result: { kind: 'linked', personId: row.person_id, displayName: row.display_name } as LinkOutcome,
        audit: { kind: 'admin_change', actor: identity, subject: `person:${row.person_id}`, detail: { action: 'link', identity } },
      };
    });
  } catch (error) {
    if (error instanceof PeopleError && error.status === 409) return { kind: 'taken' };
    throw error;
  }
}
