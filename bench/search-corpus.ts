import { createHash } from 'node:crypto';
import { statSync } from 'node:fs';
import { rm } from 'node:fs/promises';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { sql } from 'kysely';
import { from as copyFrom } from 'pg-copy-streams';
import { createPool } from '@herald/db';
import type { Db } from '@herald/db';
import { loadSqlite } from './sqlite.ts';
import { CHINESE_WORDS, CODE_WORDS, ENGLISH_WORDS, JAPANESE_WORDS, KOREAN_WORDS, TOOL_NAMES } from './search-vocabulary.ts';

export const MESSAGES_PER_SESSION = 50;
/** Users own sessions in turn; the bench asks as `u0`, who owns every other session. */
export const BENCH_USER = 'u0';

export interface BuildTimes {
  loadSeconds: number;
  fulltextSeconds: number;
  trigramSeconds: number;
  /** Herald only: the (owner_id, profile_id, created_at) btree of the bounded walk. */
  ownerTimeSeconds?: number;
  tableMb: number;
  fulltextMb: number;
  trigramMb: number;
  ownerTimeMb?: number;
}

const mb = (bytes: number) => bytes / 2 ** 20;

/** A small seeded generator (mulberry32), so every run builds the same corpus. */
function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** The uuid Postgres makes of md5('bench-session-' || s)::uuid, so sessions and messages agree. */
export function benchSessionId(session: number): string {
  const hex = createHash('md5').update(`bench-session-${session}`).digest('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

const EPOCH = Date.parse('2025-01-01T00:00:00Z');

/**
 * The generated messages as COPY rows (session_id, seq, role, content, tool_calls, tool_name,
 * created_at). A message's session, role and language follow from its number; its words are
 * drawn with a skew from the vocabulary (the first words common, the last rare). Sessions by
 * kind: 55% English, 10% code, 15% Chinese, 10% Japanese, 10% Korean; every tenth message is an
 * assistant tool call and the next one its tool result.
 */
export function* corpusRows(messages: number): Generator<(string | null)[]> {
  const random = seededRandom(42);
  const draw = (list: readonly string[], count: number, joiner: string, skew = 2.5) => Array.from({ length: count }, () => list[Math.floor(random() ** skew * list.length)] ?? '').join(joiner);
  for (let g = 1; g <= messages; g++) {
    const session = Math.floor((g - 1) / MESSAGES_PER_SESSION);
    const seq = ((g - 1) % MESSAGES_PER_SESSION) + 1;
    const kind = session % 20;
    const role = seq % 10 === 5 ? 'tool' : seq % 2 === 1 ? 'user' : 'assistant';
    let content: string;
    if (seq % 10 === 4) content = 'Let me check that.';
    else if (kind < 11) content = draw(ENGLISH_WORDS, 4 + (g % 23), ' ');
    else if (kind < 13) content = `${draw(CODE_WORDS, 3 + (g % 9), ' ', 1.5)} ${draw(ENGLISH_WORDS, 2 + (g % 6), ' ')}`;
    else if (kind < 16) content = draw(CHINESE_WORDS, 3 + (g % 12), '', 1.5) + (g % 4 === 0 ? ` ${ENGLISH_WORDS[g % 60]}` : '');
    else if (kind < 18) content = `${draw(JAPANESE_WORDS, 3 + (g % 9), 'の', 1.5)}です。`;
    else content = draw(KOREAN_WORDS, 3 + (g % 9), ' ', 1.5) + (g % 4 === 0 ? ` ${ENGLISH_WORDS[g % 60]}` : '');
    const toolCalls =
      seq % 10 === 4
        ? JSON.stringify([
            {
              id: `call_${g}`,
              name: TOOL_NAMES[g % TOOL_NAMES.length],
              arguments: JSON.stringify({ command: `${draw(CODE_WORDS, 2 + (g % 3), ' ', 1.2)} ${draw(ENGLISH_WORDS, 2, ' ')}` }),
            },
          ])
        : null;
    const toolName = seq % 10 === 5 ? (TOOL_NAMES[(g - 1) % TOOL_NAMES.length] ?? null) : null;
    yield [benchSessionId(session), String(seq), role, content, toolCalls, toolName, new Date(EPOCH + g * 30_000).toISOString()];
  }
}

function copyField(value: string | null): string {
  if (value === null) return '\\N';
  return value.replace(/[\\\t\n\r]/g, (c) => (c === '\\' ? '\\\\' : c === '\t' ? '\\t' : c === '\n' ? '\\n' : '\\r'));
}

/** COPY's text format, about a megabyte per chunk, with progress every `every` rows. */
function* copyChunks(rows: Iterable<(string | null)[]>, every: number, progress: (done: number) => void): Generator<string> {
  let chunk = '';
  let done = 0;
  for (const row of rows) {
    chunk += `${row.map(copyField).join('\t')}\n`;
    if (++done % every === 0) progress(done);
    if (chunk.length > 1 << 20) {
      yield chunk;
      chunk = '';
    }
  }
  if (chunk !== '') yield chunk;
}

/** The search indexes of migrations/0024_search_scope.sql and 0085_search_periods.sql, dropped for the load and built after it, timed. */
const SEARCH_INDEXES = {
  fulltext: sql`CREATE INDEX messages_scope_vector_idx ON messages USING gin (owner_id, session_id, (floor(extract(epoch FROM created_at - timestamptz '2000-01-01 00:00:00+00') / 2419200)::int), search_vector)`,
  trigram: sql`CREATE INDEX messages_scope_trgm_idx ON messages
    USING gin (owner_id, session_id, (floor(extract(epoch FROM created_at - timestamptz '2000-01-01 00:00:00+00') / 2419200)::int), (content || coalesce(' ' || tool_text, '')) gin_trgm_ops)`,
  ownerTime: sql`CREATE INDEX messages_scope_time_idx ON messages (owner_id, profile_id, created_at)`,
} as const;

/**
 * Builds the corpus in Postgres: sessions, then every message in one COPY (through the
 * messages_scope trigger and the generated columns, as any insert) with the search indexes
 * dropped, then the indexes, timed. Progress goes to stderr.
 */
export async function buildPostgresCorpus(db: Db, url: string, messages: number, progress: (line: string) => void): Promise<BuildTimes> {
  const sessions = Math.ceil(messages / MESSAGES_PER_SESSION);
  for (const name of ['messages_scope_vector_idx', 'messages_scope_trgm_idx', 'messages_scope_time_idx']) {
    await sql`DROP INDEX IF EXISTS ${sql.id(name)}`.execute(db);
  }
  await sql`
    INSERT INTO sessions (id, profile_id, session_key, platform, chat_type, chat_id, origin_user_id, created_at)
    SELECT md5('bench-session-' || s)::uuid, 'main', 'bench:' || s, (ARRAY['api', 'telegram', 'discord'])[1 + s % 3], 'dm',
           'chat-' || s, CASE WHEN s % 2 = 0 THEN ${BENCH_USER} ELSE 'u' || (1 + s % 9) END,
           timestamptz '2025-01-01 00:00:00+00' + (s * ${MESSAGES_PER_SESSION} + 1) * interval '30 seconds'
    FROM generate_series(0, ${sessions - 1}) AS s`.execute(db);
  const pool = createPool({ url, maxConnections: 1 });
  const started = performance.now();
  try {
    const client = await pool.connect();
    try {
      const copy = client.query(copyFrom('COPY messages (session_id, seq, role, content, tool_calls, tool_name, created_at) FROM STDIN'));
      const report = (done: number) =>
        progress(`postgres corpus: ${done.toLocaleString('en-US')} / ${messages.toLocaleString('en-US')} messages (${((performance.now() - started) / 1000).toFixed(0)} s)`);
      await pipeline(Readable.from(copyChunks(corpusRows(messages), 100_000, report)), copy);
    } finally {
      client.release();
    }
  } finally {
    await pool.end();
  }
  const loadSeconds = (performance.now() - started) / 1000;
  await sql`SET maintenance_work_mem = '256MB'`.execute(db);
  const seconds: Record<keyof typeof SEARCH_INDEXES, number> = { fulltext: 0, trigram: 0, ownerTime: 0 };
  for (const [name, statement] of Object.entries(SEARCH_INDEXES) as [keyof typeof SEARCH_INDEXES, (typeof SEARCH_INDEXES)[keyof typeof SEARCH_INDEXES]][]) {
    progress(`postgres: building the ${name} index`);
    const t = performance.now();
    await statement.execute(db);
    seconds[name] = (performance.now() - t) / 1000;
  }
  progress('postgres: analyzing');
  await sql`VACUUM ANALYZE messages`.execute(db);
  await sql`ANALYZE sessions`.execute(db);
  return {
    loadSeconds,
    fulltextSeconds: seconds.fulltext,
    trigramSeconds: seconds.trigram,
    ownerTimeSeconds: seconds.ownerTime,
    ...(await postgresSizes(db)),
  };
}

export async function postgresSizes(db: Db): Promise<Pick<BuildTimes, 'tableMb' | 'fulltextMb' | 'trigramMb' | 'ownerTimeMb'>> {
  const rows = await sql<{ table_bytes: string; fulltext: string; trigram: string; owner_time: string }>`
    SELECT pg_table_size('messages')::text AS table_bytes,
           pg_relation_size('messages_scope_vector_idx')::text AS fulltext,
           pg_relation_size('messages_scope_trgm_idx')::text AS trigram,
           pg_relation_size('messages_scope_time_idx')::text AS owner_time`.execute(db);
  const row = rows.rows[0];
  return {
    tableMb: mb(Number(row?.table_bytes)),
    fulltextMb: mb(Number(row?.fulltext)),
    trigramMb: mb(Number(row?.trigram)),
    ownerTimeMb: mb(Number(row?.owner_time)),
  };
}

/**
 * Copies the same corpus into SQLite the way Hermes stores it: messages and sessions tables, an
 * FTS5 table (unicode61) and an FTS5 trigram table over the same text Herald indexes.
 */
export async function buildSqliteCorpus(db: Db, file: string, progress: (line: string) => void): Promise<BuildTimes> {
  await rm(file, { force: true });
  await rm(`${file}-wal`, { force: true });
  await rm(`${file}-shm`, { force: true });
  const Database = await loadSqlite();
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
    const size = () =>
      statSync(file).size +
      (() => {
        try {
          return statSync(`${file}-wal`).size;
        } catch {
          return 0;
        }
      })();
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
