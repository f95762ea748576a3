import { createHash } from 'node:crypto';
import { mkdir, mkdtemp, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import initSqlJs from 'sql.js';
import { HERMES_SCHEMA_30 } from '../../cli/src/hermes-import/hermes-layout.ts';
import type { Database as SqliteDatabase } from 'sql.js';

// The tables of Hermes' state.db as an older release wrote them (SCHEMA_VERSION 21,
// ../shared/reference/hermes.md §4, the prompt inline); today's layout (30) is the one
// herald export hermes writes (cli/src/hermes-import/hermes-layout.ts).
const HERMES_SCHEMA_21 = `
  CREATE TABLE schema_version (version INTEGER NOT NULL);
  INSERT INTO schema_version VALUES (21);
  CREATE TABLE state_meta (key TEXT PRIMARY KEY, value TEXT);
  CREATE TABLE sessions (
    id TEXT PRIMARY KEY, source TEXT NOT NULL, user_id TEXT, session_key TEXT, chat_id TEXT, chat_type TEXT,
    thread_id TEXT, display_name TEXT, origin_json TEXT, expiry_finalized INTEGER DEFAULT 0, model TEXT,
    model_config TEXT, system_prompt TEXT, parent_session_id TEXT REFERENCES sessions(id), started_at REAL NOT NULL,
    ended_at REAL, end_reason TEXT, message_count INTEGER DEFAULT 0, tool_call_count INTEGER DEFAULT 0,
    input_tokens INTEGER DEFAULT 0, output_tokens INTEGER DEFAULT 0, cache_read_tokens INTEGER DEFAULT 0,
    cache_write_tokens INTEGER DEFAULT 0, reasoning_tokens INTEGER DEFAULT 0, cwd TEXT, git_branch TEXT,
    git_repo_root TEXT, billing_provider TEXT, billing_base_url TEXT, billing_mode TEXT, estimated_cost_usd REAL,
    actual_cost_usd REAL, cost_status TEXT, cost_source TEXT, pricing_version TEXT, title TEXT,
    api_call_count INTEGER DEFAULT 0, handoff_state TEXT, handoff_platform TEXT, handoff_error TEXT,
    compression_failure_cooldown_until REAL, compression_failure_error TEXT,
    compression_fallback_streak INTEGER NOT NULL DEFAULT 0, rewind_count INTEGER NOT NULL DEFAULT 0,
    archived INTEGER NOT NULL DEFAULT 0
  );
  CREATE TABLE messages (
    id INTEGER PRIMARY KEY AUTOINCREMENT, session_id TEXT NOT NULL REFERENCES sessions(id), role TEXT NOT NULL,
    content TEXT, tool_call_id TEXT, tool_calls TEXT, tool_name TEXT, effect_disposition TEXT, timestamp REAL NOT NULL,
    token_count INTEGER, finish_reason TEXT, reasoning TEXT, reasoning_content TEXT, reasoning_details TEXT,
    codex_reasoning_items TEXT, codex_message_items TEXT, platform_message_id TEXT, observed INTEGER DEFAULT 0,
    active INTEGER NOT NULL DEFAULT 1, compacted INTEGER NOT NULL DEFAULT 0
  );
  CREATE INDEX idx_messages_session ON messages(session_id, timestamp);`;

export interface HermesSessionSeed {
  id: string;
  source: string;
  userId?: string;
  chatId?: string;
  chatType?: string;
  threadId?: string;
  parentId?: string;
  startedAt: number | null;
  endedAt?: number;
  endReason?: string;
  title?: string;
  model?: string;
  /** Schema 30: stored once in system_prompts, referenced by hash; older: inline. */
  systemPrompt?: string;
  inputTokens?: number;
  outputTokens?: number;
  estimatedCostUsd?: number;
  cwd?: string;
}

export interface HermesMessageSeed {
  sessionId: string;
  role: string;
  content: string | null;
  toolCalls?: string;
  toolCallId?: string;
  toolName?: string;
  timestamp: number;
  active?: number;
  compacted?: number;
  reasoning?: string;
  platformMessageId?: string;
  tokenCount?: number;
}

const require = createRequire(import.meta.url);

/** An empty state.db: upstream's current layout (30) unless an older one (21) is asked for; or a given schema. */
export async function newHermesDb(layout: 21 | 30 | string = 30): Promise<SqliteDatabase> {
  const SQL = await initSqlJs({ locateFile: (file) => require.resolve(`sql.js/dist/${file}`) });
  const db = new SQL.Database();
  db.exec(layout === 21 ? HERMES_SCHEMA_21 : layout === 30 ? HERMES_SCHEMA_30 : layout);
  return db;
}

function hasColumn(db: SqliteDatabase, table: string, column: string): boolean {
  return (db.exec(`SELECT 1 FROM pragma_table_info('${table}') WHERE name = '${column}'`)[0]?.values.length ?? 0) > 0;
}

/** Stores a prompt as upstream does since schema 25: once, by its SHA-256. */
function promptHash(db: SqliteDatabase, prompt: string): string {
  const hash = createHash('sha256').update(prompt).digest('hex');
  db.run('INSERT OR IGNORE INTO system_prompts (hash, prompt) VALUES (?, ?)', [hash, prompt]);
  return hash;
}

export function addSessions(db: SqliteDatabase, sessions: HermesSessionSeed[]): void {
  const byHash = hasColumn(db, 'sessions', 'system_prompt_hash');
  const statement = db.prepare(
    `INSERT INTO sessions (id, source, user_id, chat_id, chat_type, thread_id, parent_session_id, started_at, ended_at, end_reason, title, model,
       ${byHash ? 'system_prompt_hash' : 'system_prompt'}, input_tokens, output_tokens, estimated_cost_usd, cwd)
     VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  for (const s of sessions) {
    const prompt = s.systemPrompt === undefined ? null : byHash ? promptHash(db, s.systemPrompt) : s.systemPrompt;
    statement.run([
      s.id,
      s.source,
      s.userId ?? null,
      s.chatId ?? null,
      s.chatType ?? null,
      s.threadId ?? null,
      s.parentId ?? null,
      s.startedAt,
      s.endedAt ?? null,
      s.endReason ?? null,
      s.title ?? null,
      s.model ?? null,
      prompt,
      s.inputTokens ?? 0,
      s.outputTokens ?? 0,
      s.estimatedCostUsd ?? null,
      s.cwd ?? null,
    ]);
  }
  statement.free();
}

export function addMessages(db: SqliteDatabase, messages: Iterable<HermesMessageSeed>): void {
  const statement = db.prepare(
    `INSERT INTO messages (session_id, role, content, tool_calls, tool_call_id, tool_name, timestamp, active, compacted, reasoning,
       platform_message_id, token_count) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  );
  db.exec('BEGIN');
  for (const m of messages) {
    statement.run([
      m.sessionId,
      m.role,
      m.content,
      m.toolCalls ?? null,
      m.toolCallId ?? null,
      m.toolName ?? null,
      m.timestamp,
      m.active ?? 1,
      m.compacted ?? 0,
      m.reasoning ?? null,
      m.platformMessageId ?? null,
      m.tokenCount ?? null,
    ]);
  }
  db.exec('COMMIT');
  statement.free();
}

/** A Hermes home in a temporary directory: state.db and whatever files the caller adds. */
export async function writeHermesHome(db: SqliteDatabase | null, files: Record<string, string | Buffer> = {}): Promise<string> {
  const home = await mkdtemp(join(tmpdir(), 'hermes-home-'));
  if (db !== null) await writeFile(join(home, 'state.db'), db.export());
  for (const [path, content] of Object.entries(files)) {
    await mkdir(join(home, path, '..'), { recursive: true });
    await writeFile(join(home, path), content);
  }
  return home;
}
