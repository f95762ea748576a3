import { existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { sql } from 'kysely';
import { createDb, ensureDatabase, migrate } from '@herald/db';
import { searchHistory } from '@herald/search';
import type { Db } from '@herald/db';
import type { SearchRoute, SearchSort } from '@herald/search';
import { ADMIN_URL } from '../test/support/test-database.ts';
import { percentile, table } from './machine.ts';
import { BENCH_USER, buildPostgresCorpus, buildSqliteCorpus, postgresSizes } from './search-corpus.ts';
import type { BuildTimes } from './search-corpus.ts';
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
    queries: mid.slice(0, 8).map((w, i) =>
      i % 2 === 0
        ? same(`${w} OR ${rare[i % rare.length]}`)
        : { herald: `${w} -${common[i % common.length]}`, fts5: `${w} NOT ${common[i % common.length]}` },
    ),
  },
  { name: 'English, prefix', queries: mid.slice(0, 8).map((w) => ({ herald: w.slice(0, 4), fts5: `${w.slice(0, 4)}*` })) },
  {
    name: 'code identifiers and paths',
    queries: ['getUserById', 'parseConfig', 'ECONNREFUSED', 'NullPointerException', 'retryWithBackoff', 'fetchJson', 'src/server/index.ts', 'package.json'].map(
      (q) => ({ herald: q, fts5: /[./_-]/.test(q) ? `"${q}"` : q }),
    ),
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
    queries: CHINESE_WORDS.filter((w) => w.length >= 3).slice(0, 8).map((w, i) => same(`${ENGLISH_WORDS[1 + (i * 7) % 59]} ${w}`)),
  },
];

const CJK = /[\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/u;

/** Hermes' search_messages, reduced to what this corpus needs: FTS5, the trigram table, or LIKE. */
class HermesSearch {
  readonly #db: Database.Database;
  constructor(file: string) {
    this.#db = new Database(file, { readonly: true });
  }

  search(query: string, sort: SearchSort, userId: string): { sessions: string[]; route: string } {
    const order = sort === 'newest' ? 'm.timestamp DESC, rank' : 'rank';
    const tokens = query.match(/"[^"]*"|\S+/g) ?? [];
    const words = tokens.filter((t) => !['OR', 'AND', 'NOT'].includes(t));
    let rows: { session_id: string }[];
    let route: string;
    if (CJK.test(query)) {
      const cjkTokens = words.filter((t) => CJK.test(t));
      if (cjkTokens.every((t) => [...t.replace(/[^\p{Script=Han}\p{Script=Hiragana}\p{Script=Katakana}\p{Script=Hangul}]/gu, '')].length >= 3)) {
        const match = tokens.map((t) => (['OR', 'AND', 'NOT'].includes(t) ? t : `"${t.replace(/"/g, '')}"`)).join(' ');
        rows = this.#db
          .prepare(`SELECT m.session_id, snippet(messages_fts_trigram, 0, '>>>', '<<<', '...', 40) AS snippet
            FROM messages_fts_trigram JOIN messages m ON m.id = messages_fts_trigram.rowid JOIN sessions s ON s.id = m.session_id
            WHERE messages_fts_trigram MATCH ? AND s.user_id = ? ORDER BY ${order} LIMIT 300`)
          .all(match, userId) as { session_id: string }[];
        route = 'trigram';
      } else {
        const like = words.map(() => '(m.content LIKE ? OR m.tool_name LIKE ? OR m.tool_calls LIKE ?)').join(' OR ');
        const params = words.flatMap((w) => [`%${w}%`, `%${w}%`, `%${w}%`]);
        rows = this.#db
          .prepare(`SELECT m.session_id, substr(m.content, max(1, instr(m.content, ?) - 60), 120) AS snippet
            FROM messages m JOIN sessions s ON s.id = m.session_id
            WHERE (${like}) AND s.user_id = ? ORDER BY m.timestamp DESC LIMIT 300`)
          .all(words[0] ?? '', ...params, userId) as { session_id: string }[];
        route = 'like';
      }
    } else {
      rows = this.#db
        .prepare(`SELECT m.session_id, snippet(messages_fts, 0, '>>>', '<<<', '...', 40) AS snippet
          FROM messages_fts JOIN messages m ON m.id = messages_fts.rowid JOIN sessions s ON s.id = m.session_id
          WHERE messages_fts MATCH ? AND s.user_id = ? ORDER BY ${order} LIMIT 300`)
        .all(query, userId) as { session_id: string }[];
      route = 'fts5';
    }
    const sessions: string[] = [];
    for (const row of rows) {
      if (!sessions.includes(row.session_id)) sessions.push(row.session_id);
      if (sessions.length === 10) break;
    }
    return { sessions, route };
  }

  close(): void {
    this.#db.close();
  }
}

async function heraldSearch(db: Db, query: string, sort: SearchSort): Promise<{ sessions: string[]; route: SearchRoute }> {
  const result = await searchHistory(db, { profileId: 'main', userId: BENCH_USER }, { query, sort, limit: 10, hitsPerSession: 1 });
  return { sessions: result.sessions.map((s) => s.sessionId), route: result.route };
}

function overlap(a: string[], b: string[]): number {
  if (a.length === 0 && b.length === 0) return 1;
  const shared = a.filter((id) => b.includes(id)).length;
  return shared / Math.max(a.length, b.length);
}

export interface SearchBenchResult {
  messages: number;
  postgres: BuildTimes;
  sqlite: BuildTimes;
  rows: (string | number)[][];
  writeCost: { indexedP50: number; plainP50: number; indexedP95: number; plainP95: number };
}

/** Per-message insert latency with the search columns and indexes, and into a copy without them. */
async function measureWriteCost(db: Db, rounds = 1000) {
  await sql`DROP TABLE IF EXISTS messages_plain`.execute(db);
  await sql`CREATE TABLE messages_plain (LIKE messages INCLUDING DEFAULTS)`.execute(db);
  await sql`ALTER TABLE messages_plain DROP COLUMN tool_text, DROP COLUMN search_vector`.execute(db);
  const session = await sql<{ id: string }>`SELECT id FROM sessions ORDER BY id LIMIT 1`.execute(db);
  const sessionId = session.rows[0]?.id ?? '';
  const base = await sql<{ seq: number }>`SELECT coalesce(max(seq), 0) + 1000 AS seq FROM messages WHERE session_id = ${sessionId}::uuid`.execute(db);
  const firstSeq = Number(base.rows[0]?.seq ?? 1000);
  const indexed: number[] = [];
  const plain: number[] = [];
  for (let i = 0; i < rounds; i++) {
    const content = `${ENGLISH_WORDS.slice(i % 50, (i % 50) + 12).join(' ')} ${CHINESE_WORDS.slice(i % 30, (i % 30) + 4).join('')}`;
    let t = performance.now();
    await sql`INSERT INTO messages (session_id, seq, role, content) VALUES (${sessionId}::uuid, ${firstSeq + i}, 'assistant', ${content})`.execute(db);
    indexed.push(performance.now() - t);
    t = performance.now();
    await sql`INSERT INTO messages_plain (session_id, seq, role, content) VALUES (${sessionId}::uuid, ${firstSeq + i}, 'assistant', ${content})`.execute(db);
    plain.push(performance.now() - t);
  }
  await sql`DELETE FROM messages WHERE session_id = ${sessionId}::uuid AND seq >= ${firstSeq}`.execute(db);
  await sql`DROP TABLE messages_plain`.execute(db);
  return {
    indexedP50: percentile(indexed, 50),
    indexedP95: percentile(indexed, 95),
    plainP50: percentile(plain, 50),
    plainP95: percentile(plain, 95),
  };
}

/**
 * The search benchmark: a generated corpus in a dedicated database (kept between runs unless its
 * size changes or BENCH_SEARCH_REBUILD=1), the same corpus in SQLite, then every query class on both.
 */
export async function runSearchBench(progress: (line: string) => void): Promise<SearchBenchResult> {
  const messages = Number(process.env.BENCH_SEARCH_MESSAGES ?? 1_000_000);
  const reps = Number(process.env.BENCH_SEARCH_REPS ?? 3);
  const url = new URL(ADMIN_URL);
  url.pathname = '/herald_bench_search';
  await ensureDatabase(url.toString());
  await migrate(url.toString());
  const db = createDb({ url: url.toString(), maxConnections: 2 });
  const file = join(tmpdir(), 'herald-bench-search.sqlite');
  try {
    const existing = await sql<{ n: string }>`SELECT count(*)::text AS n FROM messages`.execute(db);
    const rebuild = process.env.BENCH_SEARCH_REBUILD === '1' || Number(existing.rows[0]?.n) !== messages;
    let postgres: BuildTimes;
    let sqlite: BuildTimes;
    if (rebuild) {
      progress(`building a corpus of ${messages.toLocaleString('en-US')} messages in herald_bench_search`);
      await sql`TRUNCATE sessions CASCADE`.execute(db);
      postgres = await buildPostgresCorpus(db, messages, progress);
      sqlite = await buildSqliteCorpus(db, file, progress);
      await sql`CREATE TABLE IF NOT EXISTS bench_search_build (engine text PRIMARY KEY, times jsonb NOT NULL)`.execute(db);
      for (const [engine, times] of [['postgres', postgres], ['sqlite', sqlite]] as const) {
        await sql`INSERT INTO bench_search_build VALUES (${engine}, ${JSON.stringify(times)}::jsonb)
          ON CONFLICT (engine) DO UPDATE SET times = excluded.times`.execute(db);
      }
    } else {
      progress('reusing the corpus in herald_bench_search (BENCH_SEARCH_REBUILD=1 rebuilds it)');
      const saved = await sql<{ engine: string; times: BuildTimes }>`SELECT engine, times FROM bench_search_build`.execute(db);
      const byEngine = new Map(saved.rows.map((row) => [row.engine, row.times]));
      postgres = { ...(byEngine.get('postgres') as BuildTimes), ...(await postgresSizes(db)) };
      sqlite = byEngine.get('sqlite') as BuildTimes;
      if (!existsSync(file)) {
        progress(`${file} is missing: copying the corpus into SQLite again`);
        sqlite = await buildSqliteCorpus(db, file, progress);
      }
    }

    const hermes = new HermesSearch(file);
    const rows: (string | number)[][] = [];
    try {
      for (const queryClass of QUERY_CLASSES) {
        progress(`queries: ${queryClass.name}`);
        const pgTimes: number[] = [];
        const liteTimes: number[] = [];
        const relevance: number[] = [];
        const newest: number[] = [];
        const routes = new Set<string>();
        const liteRoutes = new Set<string>();
        let pgFound = 0;
        let liteFound = 0;
        for (const query of queryClass.queries) {
          // Warm both caches once, and compare what each finds.
          const pgRel = await heraldSearch(db, query.herald, 'relevance');
          const liteRel = hermes.search(query.fts5, 'relevance', BENCH_USER);
          relevance.push(overlap(pgRel.sessions, liteRel.sessions));
          newest.push(overlap((await heraldSearch(db, query.herald, 'newest')).sessions, hermes.search(query.fts5, 'newest', BENCH_USER).sessions));
          routes.add(pgRel.route);
          liteRoutes.add(liteRel.route);
          pgFound += pgRel.sessions.length;
          liteFound += liteRel.sessions.length;
          for (let i = 0; i < reps; i++) {
            let t = performance.now();
            await heraldSearch(db, query.herald, 'relevance');
            pgTimes.push(performance.now() - t);
            t = performance.now();
            hermes.search(query.fts5, 'relevance', BENCH_USER);
            liteTimes.push(performance.now() - t);
          }
        }
        const n = queryClass.queries.length;
        rows.push([
          queryClass.name,
          queryClass.queries[0]?.herald ?? '',
          [...routes].join('+'),
          percentile(pgTimes, 50).toFixed(1),
          percentile(pgTimes, 95).toFixed(1),
          [...liteRoutes].join('+'),
          percentile(liteTimes, 50).toFixed(1),
          percentile(liteTimes, 95).toFixed(1),
          `${(pgFound / n).toFixed(1)} / ${(liteFound / n).toFixed(1)}`,
          `${((100 * relevance.reduce((a, b) => a + b, 0)) / n).toFixed(0)}%`,
          `${((100 * newest.reduce((a, b) => a + b, 0)) / n).toFixed(0)}%`,
        ]);
      }
    } finally {
      hermes.close();
    }
    progress('write cost per appended message');
    const writeCost = await measureWriteCost(db);
    return { messages, postgres, sqlite, rows, writeCost };
  } finally {
    await db.destroy();
  }
}

export function printSearchBench(result: SearchBenchResult): void {
  const f = (n: number) => n.toFixed(1);
  console.log(`\n## 5. History search: Postgres (tsvector + pg_trgm) vs SQLite FTS5 + trigram (Hermes)\n`);
  console.log(
    `${result.messages.toLocaleString('en-US')} generated messages in 20,000-odd sessions (55% English, 10% code, 15% Chinese, ` +
      '10% Japanese, 10% Korean; every tenth message a tool call, the next its result). Both engines index the same text ' +
      '(content + tool names + tool-call arguments) and search as user u0, who owns half the sessions, returning the top 10 ' +
      'sessions from up to 300 ranked messages with snippets. Herald: searchHistory() over kysely. Hermes: FTS5 unicode61, ' +
      'FTS5 trigram for CJK tokens of 3+ characters, LIKE for shorter ones, as in hermes_state.py. Times in ms, ' +
      `${QUERY_CLASSES[0]?.queries.length ?? 0} queries per class, warm cache.\n`,
  );
  console.log(
    table(
      ['engine', 'load s', 'full-text index build s', 'full-text index MB', 'trigram index build s', 'trigram index MB', 'table MB'],
      [
        ['Postgres', f(result.postgres.loadSeconds), f(result.postgres.fulltextSeconds), f(result.postgres.fulltextMb), f(result.postgres.trigramSeconds), f(result.postgres.trigramMb), f(result.postgres.tableMb)],
        ['SQLite', f(result.sqlite.loadSeconds), f(result.sqlite.fulltextSeconds), f(result.sqlite.fulltextMb), f(result.sqlite.trigramSeconds), f(result.sqlite.trigramMb), f(result.sqlite.tableMb)],
      ],
    ),
  );
  console.log(
    '\nPostgres load includes computing the generated tsvector and tool_text columns. SQLite MB: file growth per FTS table ' +
      '(FTS5 stores its own copy of the text). Postgres table MB includes the generated columns and TOAST.\n',
  );
  console.log(
    table(
      ['query class', 'example', 'Herald route', 'PG p50', 'PG p95', 'Hermes route', 'SQLite p50', 'SQLite p95', 'sessions found PG / SQLite', 'top-10 overlap, relevance', 'top-10 overlap, newest'],
      result.rows,
    ),
  );
  const w = result.writeCost;
  console.log(
    `\nWrite cost: one appended message, autocommit, p50 ${w.indexedP50.toFixed(2)} ms (p95 ${w.indexedP95.toFixed(2)}) into messages ` +
      `with the search columns and both GIN indexes, vs ${w.plainP50.toFixed(2)} ms (p95 ${w.plainP95.toFixed(2)}) into a copy without them.`,
  );
}
