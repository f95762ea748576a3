import { readdirSync, readFileSync } from 'node:fs';
import { gunzipSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import pg from 'pg';
import { migrate, MIGRATIONS_DIR, withDefaultUser } from '@herald/db';
import { acceptInbound } from '@herald/inbox';
import { createTestDatabase } from '../../../test/support/test-database.ts';
import type { TestDatabase } from '../../../test/support/test-database.ts';

// pg_dump --inserts of a database migrated by the first round's numbered files 0001-0011
// (2026-11-30), before they were squashed into 0001_baseline.sql and migrations/functions/.
const LEGACY_DUMP = new URL('../../../test/fixtures/database-2026-11-30.sql.gz', import.meta.url);

async function withClient<T>(url: string, run: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: withDefaultUser(url) });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}

/** Tables, columns, constraints, indexes and function definitions: what two schemas must share. */
async function schemaOf(url: string): Promise<Record<string, string[]>> {
  return withClient(url, async (client) => {
    const rows = async (query: string) => (await client.query<{ d: string }>(query)).rows.map((row) => row.d).sort();
    return {
      columns: await rows(`
        SELECT concat_ws(' ', table_name, ordinal_position, column_name, data_type, is_nullable, column_default,
                         generation_expression) AS d
          FROM information_schema.columns WHERE table_schema = 'public'`),
      constraints: await rows(`
        SELECT conrelid::regclass || ' ' || conname || ' ' || pg_get_constraintdef(oid) AS d
          FROM pg_constraint WHERE connamespace = 'public'::regnamespace`),
      indexes: await rows(`SELECT indexdef AS d FROM pg_indexes WHERE schemaname = 'public'`),
      functions: await rows(`
        SELECT pg_get_functiondef(p.oid) AS d FROM pg_proc p WHERE p.pronamespace = 'public'::regnamespace`),
    };
  });
}

/** Rows the old code wrote: a session with a transcript, memory, a skill and a cron job. */
const LEGACY_DATA = `
  INSERT INTO sessions (id, profile_id, session_key, platform, chat_type, chat_id, origin_user_id, system_prompt)
    VALUES ('6f0b3c1e-0000-4000-8000-000000000001', 'main', 'agent:main:api:dm:c1', 'api', 'dm', 'c1', 'u1', 'You are Herald.');
  INSERT INTO session_routes (session_key, session_id) VALUES ('agent:main:api:dm:c1', '6f0b3c1e-0000-4000-8000-000000000001');
  INSERT INTO messages (session_id, seq, role, content) VALUES
    ('6f0b3c1e-0000-4000-8000-000000000001', 1, 'user', 'where is the deployment checklist?'),
    ('6f0b3c1e-0000-4000-8000-000000000001', 2, 'assistant', 'In the ops wiki, under releases.');
  INSERT INTO memory_entries (profile_id, store, user_id, content) VALUES ('main', 'user', 'u1', 'Prefers short answers.');
  INSERT INTO skill_blobs (sha256, content) VALUES ('abc', '\\x2d2d2d');
  INSERT INTO skills (profile_id, name, version, description, created_by) VALUES ('main', 'release-notes', 1, 'Write release notes', 'person');
  INSERT INTO skill_versions (profile_id, name, version, files, action, author) VALUES ('main', 'release-notes', 1, '{"SKILL.md": "abc"}', 'create', 'cli');
  INSERT INTO cron_jobs (id, profile_id, creator_user_id, name, prompt, schedule, schedule_kind, cron_expr, timezone)
    VALUES ('6f0b3c1e-0000-4000-8000-000000000002', 'main', 'u1', 'monday report', 'Summarise the week', '0 9 * * 1', 'cron', '0 9 * * 1', 'Europe/Berlin');`;

describe('upgrading a database at the 2026-11-30 schema', () => {
  let legacy: TestDatabase;
  let fresh: TestDatabase;
  beforeAll(async () => {
    fresh = await createTestDatabase();
    legacy = await createTestDatabase();
    await withClient(legacy.url, async (client) => {
      await client.query('DROP SCHEMA public CASCADE; CREATE SCHEMA public');
      await client.query(gunzipSync(readFileSync(LEGACY_DUMP)).toString('utf8'));
    });
    // pg_dump empties search_path for its own session only; the data goes in as the old code wrote it.
    await withClient(legacy.url, (client) => client.query(LEGACY_DATA));
  });
  afterAll(async () => {
    await legacy.drop();
    await fresh.drop();
  });

  it('recognises the baseline, re-creates the functions from their files and keeps every row', async () => {
    const result = await migrate(legacy.url);
    // Recorded as at the baseline: only the numbered files after it are applied.
    const later = readdirSync(MIGRATIONS_DIR)
      .filter((name) => /^\d+_.+\.sql$/.test(name) && name > '0001_baseline.sql')
      .sort();
    expect(result.applied).toEqual(later);
    expect(result.functions).toContain('herald_accept_message');
    const counts = await withClient(
      legacy.url,
      async (client) =>
        (
          await client.query(`
        SELECT (SELECT count(*) FROM messages)::int AS messages, (SELECT count(*) FROM memory_entries)::int AS memory,
               (SELECT count(*) FROM skill_versions)::int AS skills, (SELECT count(*) FROM cron_jobs)::int AS cron,
               (SELECT count(*) FROM schema_migrations WHERE name = '0001_baseline.sql')::int AS baseline`)
        ).rows[0],
    );
    expect(counts).toEqual({ messages: 2, memory: 1, skills: 1, cron: 1, baseline: 1 });
    expect((await migrate(legacy.url)).functions).toEqual([]);
  });

  it("gives the old messages their session's owner, profile and platform, for the scoped search indexes", async () => {
    await migrate(legacy.url);
    const scoped = await withClient(legacy.url, async (client) => (await client.query(`SELECT owner_id, profile_id, platform FROM messages ORDER BY seq`)).rows);
    expect(scoped).toEqual([
      { owner_id: 'api:u1', profile_id: 'main', platform: 'api' },
      { owner_id: 'api:u1', profile_id: 'main', platform: 'api' },
    ]);
  });

  it('ends with the same schema as a database created from the new layout', async () => {
    await migrate(legacy.url);
    expect(await schemaOf(legacy.url)).toEqual(await schemaOf(fresh.url));
  });

  it("serves the old rows through today's functions: the routed session takes the next message", async () => {
    await migrate(legacy.url);
    const accepted = await acceptInbound(legacy.db, {
      profileId: 'main',
      platform: 'api',
      chatType: 'dm',
      chatId: 'c1',
      userId: 'api:u1',
      text: 'and the rollback plan?',
    });
    expect(accepted.sessionId).toBe('6f0b3c1e-0000-4000-8000-000000000001');
    const found = await withClient(
      legacy.url,
      async (client) => (await client.query(`SELECT count(*)::int AS n FROM messages WHERE search_vector @@ websearch_to_tsquery('english', 'deploying')`)).rows[0],
    );
    expect(found).toEqual({ n: 1 });
  });

  it('refuses a database stopped part-way through the old files instead of guessing', async () => {
    const partial = await createTestDatabase();
    try {
      await withClient(partial.url, (client) => client.query(`DELETE FROM schema_migrations; INSERT INTO schema_migrations (name) VALUES ('0001_spine.sql'), ('0002_turn_functions.sql')`));
      await expect(migrate(partial.url)).rejects.toThrow(/older than 0011_completion_function\.sql/);
    } finally {
      await partial.drop();
    }
  });
});
