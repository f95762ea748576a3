import { existsSync } from 'node:fs';
import { mkdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import { createDb, ensureDatabase, migrate } from '@herald/db';
import { searchHistory } from '@herald/search';
import type { Db } from '@herald/db';
import type { SearchRoute, SearchSort } from '@herald/search';
import { ADMIN_URL } from '../test/support/test-database.ts';
import { HermesSearch } from './hermes-search.ts';
import { percentile, table } from './machine.ts';
import { BENCH_USER, buildPostgresCorpus, buildSqliteCorpus, postgresSizes } from './search-corpus.ts';
import type { BuildTimes } from './search-corpus.ts';
import { loadSqlite } from './sqlite.ts';
import { CHINESE_WORDS, ENGLISH_WORDS } from './search-vocabulary.ts';

/** One query in Herald's syntax and in the FTS5 syntax a model would send Hermes. */
interface BenchQuery {
  herald: string;
  fts5: string;
}

interface QueryClass {
  name: string;
  queries: BenchQuery[];
}

const STOP = new Set(['the']);
const common = ENGLISH_WORDS.filter((w) => !STOP.has(w)).slice(0, 12);
const mid = ENGLISH_WORDS.slice(120, 200).filter((_, i) => i % 10 === 0);
const rare = ENGLISH_WORDS.slice(-80).filter((_, i) => i % 10 === 0);
const same = (q: string): BenchQuery => ({ herald: q, fts5: q });

export const QUERY_CLASSES: QueryClass[] = [
  { name: 'English, common word', queries: common.slice(0, 8).map(same) },
  { name: 'English, rare word', queries: rare.map(same) },
  { name: 'English, two words', queries: common.slice(0, 8).map((w, i) => same(`${w} ${mid[i % mid.length]}`)) },
  { name: 'English, phrase', queries: common.slice(0, 8).map((w, i) => same(`"${w} ${common[(i + 1) % common.length]}"`)) },
  {
    name: 'English, OR / exclusion',
    queries: mid.slice(0, 8).map((w, i) => (i % 2 === 0 ? same(`${w} OR ${rare[i % rare.length]}`) : { herald: `${w} -${common[i % common.length]}`, fts5: `${w} NOT ${common[i % common.length]}` })),
  },
  { name: 'English, prefix', queries: mid.slice(0, 8).map((w) => ({ herald: w.slice(0, 4), fts5: `${w.slice(0, 4)}*` })) },
  {
    name: 'code identifiers and paths',
    queries: ['getUserById', 'parseConfig', 'ECONNREFUSED', 'NullPointerException', 'retryWithBackoff', 'fetchJson', 'src/server/index.ts', 'package.json'].map((q) => ({
      herald: q,
      fts5: /[./_-]/.test(q) ? `"${q}"` : q,
    })),
  },
  {
    name: 'tool names and arguments',
    queries: ['kubectl', 'web_search', 'read_file', 'search_files', 'pytest', 'cargo', 'docker', 'npm'].map((q) => ({
      herald: q,
      fts5: /[./_-]/.test(q) ? `"${q}"` : q,
    })),
  },
  { name: 'Chinese, 3+ characters', queries: ['服务器', '数据库', '流水线', '机器学习', '人工智能', '数据分析', '产品经理', '开发团队'].map(same) },
  { name: 'Japanese/Korean, 3+ chars', queries: ['データベース', 'タイムアウト', 'パスワード', 'バックアップ', '데이터베이스', '마이그레이션', '비밀번호', '모니터링'].map(same) },
  { name: 'CJK, 1-2 characters', queries: ['北京', '会议', '部署', '東京', '会議', '서버', '회의', '京'].map(same) },
  {
    name: 'mixed Latin + CJK',
    queries: CHINESE_WORDS.filter((w) => w.length >= 3)
      .slice(0, 8)
      .map((w, i) => same(`${ENGLISH_WORDS[1 + ((i * 7) % 59)]} ${w}`)),
  },
];

async function heraldSearch(db: Db, query: string, sort: SearchSort): Promise<{ sessions: string[]; route: SearchRoute }> {
  const result = await searchHistory(db, { profileId: 'main', userId: BENCH_USER }, { query, sort, limit: 10, hitsPerSession: 1 });
  return { sessions: result.sessions.map((s) => s.sessionId), route: result.route };
}

function overlap(a: string[], b: string[]): number {
  if (a.length === 0 && b.length === 0) return 1;
  const shared = a.filter((id) => b.includes(id)).length;
  return shared / Math.max(a.length, b.length);
}

/** One engine's figures for one query class (times in ms; sessions found averaged per query). */
export interface EngineFigures {
  p50_ms: number;
  p95_ms: number;
  max_ms: number;
  sessions_found: number;
  route: string;
}

export interface ClassResult {
  class: string;
  example: string;
  herald: EngineFigures;
  fts5: EngineFigures;
  /** Top-10 sessions in common, percent, both engines sorting newest first. */
  overlap_newest: number;
  /** Top-10 sessions in common, percent, both engines ranking by relevance. */
  overlap_relevance: number;
}

export interface WriteCost {
  indexedP50: number;
  plainP50: number;
  indexedP95: number;
  plainP95: number;
}

export interface SearchBenchResult {
  messages: number;
  postgres: BuildTimes;
  sqlite: BuildTimes;
  classes: ClassResult[];
  writeCost: WriteCost;
}

const round = (n: number, digits = 2) => Number(n.toFixed(digits));

function figures(times: number[], found: number, queries: number, routes: Set<string>): EngineFigures {
  return {
    p50_ms: round(percentile(times, 50)),
    p95_ms: round(percentile(times, 95)),
    max_ms: round(Math.max(...times)),
    sessions_found: round(found / queries, 1),
    route: [...routes].join('+'),
  };
}

const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / Math.max(1, values.length);

/** Every query of a class on both engines: what each finds (once, warming both caches), then `reps` timed runs. */
async function measureClass(db: Db, hermes: HermesSearch, queryClass: QueryClass, reps: number): Promise<ClassResult> {
  const times = { herald: [] as number[], fts5: [] as number[] };
  const found = { herald: 0, fts5: 0 };
  const routes = { herald: new Set<string>(), fts5: new Set<string>() };
  const relevance: number[] = [];
  const newest: number[] = [];
  for (const query of queryClass.queries) {
    const pgRel = await heraldSearch(db, query.herald, 'relevance');
    const liteRel = hermes.search(query.fts5, 'relevance', BENCH_USER);
    relevance.push(overlap(pgRel.sessions, liteRel.sessions));
    newest.push(overlap((await heraldSearch(db, query.herald, 'newest')).sessions, hermes.search(query.fts5, 'newest', BENCH_USER).sessions));
    routes.herald.add(pgRel.route);
    routes.fts5.add(liteRel.route);
    found.herald += pgRel.sessions.length;
    found.fts5 += liteRel.sessions.length;
    for (let i = 0; i < reps; i++) {
      let t = performance.now();
      await heraldSearch(db, query.herald, 'relevance');
      times.herald.push(performance.now() - t);
      t = performance.now();
      hermes.search(query.fts5, 'relevance', BENCH_USER);
      times.fts5.push(performance.now() - t);
    }
  }
  const n = queryClass.queries.length;
  return {
    class: queryClass.name,
    example: queryClass.queries[0]?.herald ?? '',
    herald: figures(times.herald, found.herald, n, routes.herald),
    fts5: figures(times.fts5, found.fts5, n, routes.fts5),
    overlap_newest: round(100 * mean(newest), 1),
    overlap_relevance: round(100 * mean(relevance), 1),
  };
}

/**
 * Per-message insert latency, autocommit: into messages (the scope trigger, the generated search
 * columns, the composite indexes) and into a copy with its keys but without any of those.
 */
async function measureWriteCost(db: Db, rounds = 1000): Promise<WriteCost> {
  await sql`DROP TABLE IF EXISTS messages_plain`.execute(db);
  await sql`CREATE TABLE messages_plain (LIKE messages INCLUDING DEFAULTS INCLUDING INDEXES)`.execute(db);
  // Dropping the columns drops the search indexes built on them; the keys stay.
  await sql`ALTER TABLE messages_plain DROP COLUMN tool_text, DROP COLUMN search_vector, DROP COLUMN profile_id,
    DROP COLUMN owner_id, DROP COLUMN platform`.execute(db);
  const session = await sql<{ id: string }>`SELECT id FROM sessions WHERE origin_user_id = ${BENCH_USER} ORDER BY id LIMIT 1`.execute(db);
  const sessionId = session.rows[0]?.id ?? '';
  const base = await sql<{ seq: number }>`SELECT coalesce(max(seq), 0) + 1000 AS seq FROM messages WHERE session_id = ${sessionId}::uuid`.execute(db);
  const firstSeq = Number(base.rows[0]?.seq ?? 1000);
  const indexed: number[] = [];
  const plain: number[] = [];
  try {
    for (let i = 0; i < rounds; i++) {
      const content = `${ENGLISH_WORDS.slice(i % 50, (i % 50) + 12).join(' ')} ${CHINESE_WORDS.slice(i % 30, (i % 30) + 4).join('')}`;
      let t = performance.now();
      await sql`INSERT INTO messages (session_id, seq, role, content) VALUES (${sessionId}::uuid, ${firstSeq + i}, 'assistant', ${content})`.execute(db);
      indexed.push(performance.now() - t);
      t = performance.now();
      await sql`INSERT INTO messages_plain (session_id, seq, role, content) VALUES (${sessionId}::uuid, ${firstSeq + i}, 'assistant', ${content})`.execute(db);
      plain.push(performance.now() - t);
    }
  } finally {
    await sql`DELETE FROM messages WHERE session_id = ${sessionId}::uuid AND seq >= ${firstSeq}`.execute(db);
    await sql`DROP TABLE messages_plain`.execute(db);
  }
  return { indexedP50: percentile(indexed, 50), indexedP95: percentile(indexed, 95), plainP50: percentile(plain, 50), plainP95: percentile(plain, 95) };
}

/** The corpus in herald_bench_search, built again unless it is there at the same size (BENCH_SEARCH_REBUILD=1 forces it). */
async function prepareCorpus(db: Db, url: string, file: string, messages: number, progress: (line: string) => void) {
  const existing = await sql<{ n: string }>`SELECT count(*)::text AS n FROM messages`.execute(db);
  const indexed = await sql<{ n: string }>`SELECT count(*)::text AS n FROM pg_indexes WHERE indexname = 'messages_scope_time_idx'`.execute(db);
  const rebuild = process.env.BENCH_SEARCH_REBUILD === '1' || Number(existing.rows[0]?.n) !== messages || Number(indexed.rows[0]?.n) === 0;
  if (rebuild) {
    progress(`building a corpus of ${messages.toLocaleString('en-US')} messages in herald_bench_search`);
    await sql`TRUNCATE sessions CASCADE`.execute(db);
    const postgres = await buildPostgresCorpus(db, url, messages, progress);
    const sqlite = await buildSqliteCorpus(db, file, progress);
    await sql`CREATE TABLE IF NOT EXISTS bench_search_build (engine text PRIMARY KEY, times jsonb NOT NULL)`.execute(db);
    for (const [engine, times] of [
      ['postgres', postgres],
      ['sqlite', sqlite],
    ] as const) {
      await sql`INSERT INTO bench_search_build VALUES (${engine}, ${JSON.stringify(times)}::jsonb)
        ON CONFLICT (engine) DO UPDATE SET times = excluded.times`.execute(db);
    }
    return { postgres, sqlite };
  }
  progress('reusing the corpus in herald_bench_search (BENCH_SEARCH_REBUILD=1 rebuilds it)');
  const saved = await sql<{ engine: string; times: BuildTimes }>`SELECT engine, times FROM bench_search_build`.execute(db);
  const byEngine = new Map(saved.rows.map((row) => [row.engine, row.times]));
  const postgres = { ...(byEngine.get('postgres') as BuildTimes), ...(await postgresSizes(db)) };
  let sqlite = byEngine.get('sqlite') as BuildTimes;
  if (!existsSync(file)) {
    progress(`${file} is missing: copying the corpus into SQLite again`);
    sqlite = await buildSqliteCorpus(db, file, progress);
  }
  return { postgres, sqlite };
}

/**
 * The search benchmark: a generated corpus in a dedicated database, the same corpus in SQLite,
 * then every query class on both in one run, and the write cost of one appended message.
 */
export async function runSearchBench(progress: (line: string) => void): Promise<SearchBenchResult> {
  const Database = await loadSqlite();
  const messages = Number(process.env.BENCH_SEARCH_MESSAGES ?? 1_000_000);
  const reps = Number(process.env.BENCH_SEARCH_REPS ?? 3);
  const url = new URL(ADMIN_URL);
  url.pathname = '/herald_bench_search';
  await ensureDatabase(url.toString());
  await migrate(url.toString());
  const db = createDb({ url: url.toString(), maxConnections: 2 });
  const file = join(tmpdir(), 'herald-bench-search.sqlite');
  try {
    const { postgres, sqlite } = await prepareCorpus(db, url.toString(), file, messages, progress);
    const hermes = new HermesSearch(Database, file);
    const classes: ClassResult[] = [];
    try {
      for (const queryClass of QUERY_CLASSES) {
        progress(`queries: ${queryClass.name}`);
        classes.push(await measureClass(db, hermes, queryClass, reps));
      }
    } finally {
      hermes.close();
    }
    progress('write cost per appended message');
    const writeCost = await measureWriteCost(db);
    return { messages, postgres, sqlite, classes, writeCost };
  } finally {
    await db.destroy();
  }
}

export const SEARCH_RESULTS_FILE = new URL('./results/search.json', import.meta.url);

/**
 * bench/results/search.json: the figures of one run in a fixed shape, to compare runs.
 * `load` seconds and `build` seconds per index, `index_mb` per index, per engine.
 */
export async function writeSearchJson(result: SearchBenchResult, machine: string): Promise<void> {
  const { postgres: pg, sqlite: lite } = result;
  const json = {
    machine,
    date: new Date().toISOString(),
    messages: result.messages,
    load: { herald_s: round(pg.loadSeconds, 1), fts5_s: round(lite.loadSeconds, 1) },
    build: {
      herald_s: { fulltext: round(pg.fulltextSeconds, 1), trigram: round(pg.trigramSeconds, 1), owner_time: round(pg.ownerTimeSeconds ?? 0, 1) },
      fts5_s: { fulltext: round(lite.fulltextSeconds, 1), trigram: round(lite.trigramSeconds, 1) },
    },
    index_mb: {
      herald: { fulltext: round(pg.fulltextMb, 1), trigram: round(pg.trigramMb, 1), owner_time: round(pg.ownerTimeMb ?? 0, 1), table: round(pg.tableMb, 1) },
      fts5: { fulltext: round(lite.fulltextMb, 1), trigram: round(lite.trigramMb, 1), table: round(lite.tableMb, 1) },
    },
    write_cost_ms: {
      p50_with_search: round(result.writeCost.indexedP50, 3),
      p50_without: round(result.writeCost.plainP50, 3),
      p95_with_search: round(result.writeCost.indexedP95, 3),
      p95_without: round(result.writeCost.plainP95, 3),
    },
    classes: result.classes,
  };
  await mkdir(new URL('./', SEARCH_RESULTS_FILE), { recursive: true });
  await writeFile(SEARCH_RESULTS_FILE, `${JSON.stringify(json, null, 2)}\n`);
}

export function printSearchBench(result: SearchBenchResult): void {
  const f = (n: number | undefined) => (n === undefined ? '-' : n.toFixed(1));
  console.log(`\n## 5. History search: Herald (owner-scoped composite indexes, bounded candidates) vs SQLite FTS5 + trigram (Hermes)\n`);
  console.log(
    `${result.messages.toLocaleString('en-US')} generated messages in 20,000-odd sessions (55% English, 10% code, 15% Chinese, ` +
      '10% Japanese, 10% Korean; every tenth message a tool call, the next its result). Both engines index the same text ' +
      '(content + tool names + tool-call arguments) and search as user u0, who owns half the sessions, returning the top 10 ' +
      'sessions. Herald: searchHistory() over kysely, ranking within the newest 300 matches. Hermes: FTS5 unicode61, ' +
      'FTS5 trigram for CJK tokens of 3+ characters, LIKE for shorter ones, as in hermes_state.py, up to 300 ranked messages. ' +
      `Times in ms, ${QUERY_CLASSES[0]?.queries.length ?? 0} queries per class, warm cache, one run for both engines.\n`,
  );
  const pg = result.postgres;
  const lite = result.sqlite;
  console.log(
    table(
      ['engine', 'load s', 'full-text index build s', 'full-text index MB', 'trigram index build s', 'trigram index MB', 'owner/time btree s', 'owner/time btree MB', 'table MB'],
      [
        ['Herald', f(pg.loadSeconds), f(pg.fulltextSeconds), f(pg.fulltextMb), f(pg.trigramSeconds), f(pg.trigramMb), f(pg.ownerTimeSeconds), f(pg.ownerTimeMb), f(pg.tableMb)],
        ['SQLite', f(lite.loadSeconds), f(lite.fulltextSeconds), f(lite.fulltextMb), f(lite.trigramSeconds), f(lite.trigramMb), '-', '-', f(lite.tableMb)],
      ],
    ),
  );
  console.log(
    '\nHerald load: one COPY through the scope trigger and the generated tsvector and tool_text columns, indexes dropped. ' +
      'SQLite MB: file growth per FTS table (FTS5 stores its own copy of the text). Herald table MB includes the generated columns and TOAST.\n',
  );
  console.log(
    table(
      ['query class', 'example', 'Herald route', 'Herald p50', 'p95', 'max', 'FTS5 route', 'FTS5 p50', 'p95', 'max', 'sessions found Herald / FTS5', 'overlap, relevance', 'overlap, newest'],
      result.classes.map((c) => [
        c.class,
        c.example,
        c.herald.route,
        f(c.herald.p50_ms),
        f(c.herald.p95_ms),
        f(c.herald.max_ms),
        c.fts5.route,
        f(c.fts5.p50_ms),
        f(c.fts5.p95_ms),
        f(c.fts5.max_ms),
        `${c.herald.sessions_found.toFixed(1)} / ${c.fts5.sessions_found.toFixed(1)}`,
        `${c.overlap_relevance.toFixed(0)}%`,
        `${c.overlap_newest.toFixed(0)}%`,
      ]),
    ),
  );
  const w = result.writeCost;
  console.log(
    `\nWrite cost: one appended message, autocommit, p50 ${w.indexedP50.toFixed(2)} ms (p95 ${w.indexedP95.toFixed(2)}) into messages ` +
      `with the scope trigger, the search columns and the three search indexes, vs ${w.plainP50.toFixed(2)} ms (p95 ${w.plainP95.toFixed(2)}) into a copy without them.`,
  );
}
