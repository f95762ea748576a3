import { sql } from 'kysely';
import { withAudit } from '@herald/audit';
import type { Db } from '@herald/db';
import { requirePerson } from './people-store.ts';
import type { Person } from './people-store.ts';

/** The format of `herald people export`: a version, the person, and everything of theirs. */
export const PERSON_EXPORT_FORMAT = 'herald-person-export/1';

export interface PersonExport {
  format: typeof PERSON_EXPORT_FORMAT;
  exported_at: string;
  person: { id: string; display_name: string; key: string; identities: string[]; grants: { role: string; profiles: string[] }[]; created_at: string };
  sessions: unknown[];
  memory: unknown[];
  skills: unknown[];
  cron_jobs: unknown[];
  usage: unknown[];
}

/** Every id the person's data may be filed under: the key and each linked identity. */
const keysOf = (person: Person) => [...new Set([person.key, ...person.identities])];

/** Everything of a person's as one JSON document (herald_person_data builds it in one statement, one snapshot). */
export async function exportPerson(db: Db, id: string): Promise<PersonExport> {
  const person = await requirePerson(db, id);
  const { rows } = await sql<{ data: Omit<PersonExport, 'format' | 'exported_at' | 'person'> }>`SELECT herald_person_data(${keysOf(person)}::text[]) AS data`.execute(db);
  const data = rows[0]?.data ?? { sessions: [], memory: [], skills: [], cron_jobs: [], usage: [] };
  return {
    format: PERSON_EXPORT_FORMAT,
    exported_at: new Date().toISOString(),
    person: {
      id: person.id,
      display_name: person.displayName,
      key: person.key,
      identities: person.identities,
      grants: person.grants.map((g) => ({ role: g.role, profiles: [...g.profiles] })),
      created_at: person.createdAt.toISOString(),
    },
    ...data,
  };
}

export interface ErasedCounts {
  messages: number;
  memory: number;
}

/**
 * Erases a person in one transaction: messages, memory, cron jobs, tokens, identities, grants and
 * the person. The audit entry says that it happened and who did it; not what was erased.
 */
export async function erasePerson(db: Db, id: string, actor: string): Promise<ErasedCounts> {
  const person = await requirePerson(db, id);
  return withAudit(db, async (trx) => {
    const { rows } = await sql<{ messages: string; memory: string }>`SELECT * FROM herald_erase_person(${person.id}::uuid, ${keysOf(person)}::text[])`.execute(trx);
    const counts = { messages: Number(rows[0]?.messages ?? 0), memory: Number(rows[0]?.memory ?? 0) };
    return { result: counts, audit: { kind: 'admin_change', actor, subject: `person:${person.id}`, detail: { action: 'erase' } } };
  });
}
