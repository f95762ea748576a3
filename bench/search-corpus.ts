import { statSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import Database from 'better-sqlite3';
import { sql } from 'kysely';
import type { Db } from '@herald/db';
import { CHINESE_WORDS, CODE_WORDS, ENGLISH_WORDS, JAPANESE_WORDS, KOREAN_WORDS, TOOL_NAMES } from './search-vocabulary.ts';

export const MESSAGES_PER_SESSION = 50;
/** Users own sessions in turn; the bench asks as `u0`, who owns every other session. */
export const BENCH_USER = 'u0';

export interface BuildTimes {
  loadSeconds: number;
  fulltextSeconds: number;
  trigramSeconds: number;
  tableMb: number;
  fulltextMb: number;
  trigramMb: number;
}

const mb = (bytes: number) => bytes / 2 ** 20;

/**
 * One batch of generated messages, all in SQL: a message's session, role and language follow
 * from its number; its words are drawn with random() from the vocabulary arrays (bound as
 * parameters). Sessions by kind: 55% English, 10% code, 15% Chinese, 10% Japanese, 10% Korean;
 * every tenth message is an assistant tool call and the next one its tool result.
 */
function insertBatch(from: number, to: number) {
  const words = (list: string, count: string, joiner: string, skew = '2.5') =>
    sql.raw(`array_to_string(ARRAY(SELECT ${list}[1 + floor(power(random(), ${skew}) * cardinality(${list}))::int]
      FROM generate_series(1, ${count})), '${joiner}')`);
  return sql`
    WITH v AS (SELECT ${ENGLISH_WORDS}::text[] AS en, ${CHINESE_WORDS}::text[] AS zh, ${JAPANESE_WORDS}::text[] AS ja,
                      ${KOREAN_WORDS}::text[] AS ko, ${CODE_WORDS}::text[] AS code, ${TOOL_NAMES}::text[] AS tools),
    x AS (
      SELECT g, (g - 1) / ${MESSAGES_PER_SESSION} AS s, (g - 1) % ${MESSAGES_PER_SESSION} + 1 AS seq,
             ((g - 1) / ${MESSAGES_PER_SESSION}) % 20 AS kind, v.*
      FROM generate_series(${from}::bigint, ${to}::bigint) AS g, v)
    INSERT INTO messages (session_id, seq, role, content, tool_calls, tool_name, created_at)
    SELECT md5('bench-session-' || x.s)::uuid, x.seq,
      CASE WHEN x.seq % 10 = 5 THEN 'tool' WHEN x.seq % 2 = 1 THEN 'user' ELSE 'assistant' END,
      CASE
        WHEN x.seq % 10 = 4 THEN 'Let me check that.'
        WHEN x.kind < 11 THEN ${words('x.en', '4 + x.g % 23', ' ')}
        WHEN x.kind < 13 THEN ${words('x.code', '3 + x.g % 9', ' ', '1.5')} || ' ' || ${words('x.en', '2 + x.g % 6', ' ')}
        WHEN x.kind < 16 THEN ${words('x.zh', '3 + x.g % 12', '', '1.5')} || CASE WHEN x.g % 4 = 0 THEN ' ' || x.en[1 + x.g % 60] ELSE '' END
        WHEN x.kind < 18 THEN ${words('x.ja', '3 + x.g % 9', 'の', '1.5')} || 'です。'
        ELSE ${words('x.ko', '3 + x.g % 9', ' ', '1.5')} || CASE WHEN x.g % 4 = 0 THEN ' ' || x.en[1 + x.g % 60] ELSE '' END
      END,
      CASE WHEN x.seq % 10 = 4 THEN jsonb_build_array(jsonb_build_object(
        'id', 'call_' || x.g, 'name', x.tools[1 + x.g % cardinality(x.tools)],
        'arguments', jsonb_build_object('command', ${words('x.code', '2 + x.g % 3', ' ', '1.2')} || ' ' || ${words('x.en', '2', ' ')})::text)) END,
      CASE WHEN x.seq % 10 = 5 THEN x.tools[1 + (x.g - 1) % cardinality(x.tools)] END,
      timestamptz '2025-01-01 00:00:00+00' + x.g * interval '30 seconds'
    FROM x`;
}

/**
 * Builds the corpus in Postgres: sessions, then messages in batches with the search indexes
 * dropped, then the two indexes, timed. Progress goes to stderr.
 */
export async function buildPostgresCorpus(db: Db, messages: number, progress: (line: string) => void): Promise<BuildTimes> {
  const sessions = Math.ceil(messages / MESSAGES_PER_SESSION);
  await sql`SELECT setseed(0.42)`.execute(db);
  await sql`DROP INDEX IF EXISTS messages_search_vector_idx`.execute(db);
  await sql`DROP INDEX IF EXISTS messages_search_trgm_idx`.execute(db);
  await sql`
    INSERT INTO sessions (id, profile_id, session_key, platform, chat_type, chat_id, origin_user_id, created_at)
    SELECT md5('bench-session-' || s)::uuid, 'main', 'bench:' || s, (ARRAY['api', 'telegram', 'discord'])[1 + s % 3], 'dm',
           'chat-' || s, CASE WHEN s % 2 = 0 THEN 'u0' ELSE 'u' || (1 + s % 9) END,
           timestamptz '2025-01-01 00:00:00+00' + (s * ${MESSAGES_PER_SESSION} + 1) * interval '30 seconds'
    FROM generate_series(0, ${sessions - 1}) AS s`.execute(db);
  const started = performance.now();
  const batch = 50_000;
  for (let from = 1; from <= messages; from += batch) {
    const to = Math.min(messages, from + batch - 1);
    await insertBatch(from, to).execute(db);
    const elapsed = (performance.now() - started) / 1000;
    progress(`postgres corpus: ${to.toLocaleString('en-US')} / ${messages.toLocaleString('en-US')} messages (${elapsed.toFixed(0)} s)`);
  }
  const loadSeconds = (performance.now() - started) / 1000;
  await sql`SET maintenance_work_mem = '256MB'`.execute(db);
  progress('postgres: building the tsvector GIN index');
  let t = performance.now();
  await sql`CREATE INDEX messages_search_vector_idx ON messages USING gin (search_vector)`.execute(db);
  const fulltextSeconds = (performance.now() - t) / 1000;
  progress(`postgres: tsvector index built in ${fulltextSeconds.toFixed(1)} s; building the trigram GIN index`);
  t = performance.now();
  await sql`CREATE INDEX messages_search_trgm_idx ON messages USING gin ((content || coalesce(' ' || tool_text, '')) gin_trgm_ops)`.execute(db);
  const trigramSeconds = (performance.now() - t) / 1000;
  progress(`postgres: trigram index built in ${trigramSeconds.toFixed(1)} s; analyzing`);
  await sql`VACUUM ANALYZE messages`.execute(db);
  await sql`ANALYZE sessions`.execute(db);
  return { loadSeconds, fulltextSeconds, trigramSeconds, ...(await postgresSizes(db)) };
}

export async function postgresSizes(db: Db): Promise<Pick<BuildTimes, 'tableMb' | 'fulltextMb' | 'trigramMb'>> {
  const rows = await sql<{ table_bytes: string; fulltext: string; trigram: string }>`
    SELECT pg_table_size('messages')::text AS table_bytes,
           pg_relation_size('messages_search_vector_idx')::text AS fulltext,
           pg_relation_size('messages_search_trgm_idx')::text AS trigram`.execute(db);
  const row = rows.rows[0];
  return { tableMb: mb(Number(row?.table_bytes)), fulltextMb: mb(Number(row?.fulltext)), trigramMb: mb(Number(row?.trigram)) };
}

/**
 * Copies the same corpus into SQLite the way Hermes stores it: messages and sessions tables, an
 * FTS5 table (unicode61) and an FTS5 trigram table over the same text Herald indexes.
 */
export async function buildSqliteCorpus(db: Db, file: string, progress: (line: string) => void): Promise<BuildTimes> {
  await rm(file, { force: true });
  await rm(`${file}-wal`, { force: true });
  await rm(`${file}-shm`, { force: true });
  const lite = new Database(file);
  try {
    lite.pragma('journal_mode = WAL');
    lite.pragma('synchronous = NORMAL');
    lite.exec(`
      CREATE TABLE sessions (id TEXT PRIMARY KEY, user_id TEXT, source TEXT, started_at REAL);
      CREATE TABLE messages (id INTEGER PRIMARY KEY, session_id TEXT NOT NULL, role TEXT NOT NULL, content TEXT,
        tool_name TEXT, tool_calls TEXT, timestamp REAL NOT NULL);
      CREATE INDEX idx_messages_session ON messages (session_id, timestamp);`);
    const sessions = await sql<{ id: string; origin_user_id: string; platform: string; created: number }>`
      SELECT id, origin_user_id, platform, extract(epoch FROM created_at)::float8 AS created FROM sessions`.execute(db);
    const insertSession = lite.prepare('INSERT INTO sessions VALUES (?, ?, ?, ?)');
    lite.transaction(() => {
      for (const row of sessions.rows) insertSession.run(row.id, row.origin_user_id, row.platform, row.created);
    })();
    const insert = lite.prepare('INSERT INTO messages VALUES (?, ?, ?, ?, ?, ?, ?)');
    const started = performance.now();
    let last = 0;
    let copied = 0;
    for (;;) {
      const rows = await sql<{ id: string; session_id: string; role: string; content: string; tool_name: string | null; tool_text: string | null; ts: number }>`
        SELECT id::text AS id, session_id, role, content, tool_name, tool_text, extract(epoch FROM created_at)::float8 AS ts
        FROM messages m WHERE m.id > ${last} ORDER BY m.id LIMIT 100000`.execute(db);
      if (rows.rows.length === 0) break;
      lite.transaction(() => {
        for (const row of rows.rows) {
          // tool_calls holds the same flattened names and arguments Herald indexes, so both engines see one text.
          insert.run(Number(row.id), row.session_id, row.role, row.content, row.tool_name, row.tool_text, row.ts);
        }
      })();
      last = Number(rows.rows.at(-1)?.id);
      copied += rows.rows.length;
      progress(`sqlite corpus: ${copied.toLocaleString('en-US')} messages copied`);
    }
    const loadSeconds = (performance.now() - started) / 1000;
    const size = () => statSync(file).size + (() => { try { return statSync(`${file}-wal`).size; } catch { return 0; } })();
    lite.pragma('wal_checkpoint(TRUNCATE)');
    const base = size();
    // Hermes' index text: content, tool name and tool calls in one column.
    const text = `coalesce(content, '') || ' ' || coalesce(tool_name, '') || ' ' || coalesce(tool_calls, '')`;
    progress('sqlite: building the FTS5 unicode61 table');
    let t = performance.now();
    lite.exec(`CREATE VIRTUAL TABLE messages_fts USING fts5(content);
      INSERT INTO messages_fts (rowid, content) SELECT id, ${text} FROM messages;`);
    const fulltextSeconds = (performance.now() - t) / 1000;
    lite.pragma('wal_checkpoint(TRUNCATE)');
    const afterFts = size();
    progress(`sqlite: FTS5 built in ${fulltextSeconds.toFixed(1)} s; building the FTS5 trigram table`);
    t = performance.now();
    lite.exec(`CREATE VIRTUAL TABLE messages_fts_trigram USING fts5(content, tokenize='trigram');
      INSERT INTO messages_fts_trigram (rowid, content) SELECT id, ${text} FROM messages;`);
    const trigramSeconds = (performance.now() - t) / 1000;
    lite.pragma('wal_checkpoint(TRUNCATE)');
    const afterTrigram = size();
    lite.exec('ANALYZE');
    return {
      loadSeconds,
      fulltextSeconds,
      trigramSeconds,
      tableMb: mb(base),
      fulltextMb: mb(afterFts - base),
      trigramMb: mb(afterTrigram - afterFts),
    };
  } finally {
    lite.close();
  }
}
