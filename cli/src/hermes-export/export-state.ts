import { createHash } from 'node:crypto';
import { createRequire } from 'node:module';
import { sql } from 'kysely';
import initSqlJs from 'sql.js';
import type { Database as SqliteDatabase } from 'sql.js';
import type { Db, StoredToolCall } from '@herald/db';
import { HERMES_SCHEMA_30 } from '../hermes-import/hermes-layout.ts';

// A person's sessions as a Hermes state.db in upstream's current layout. A session that came from
// Hermes goes back under its Hermes id (its session_key says which), so export then import lands
// on the same Herald ids; Herald's own sessions go under their Herald id.

const require = createRequire(import.meta.url);

export interface StateExport {
  sessions: number;
  messages: number;
  bytes: Uint8Array;
}

interface SessionRow {
  id: string;
  session_key: string;
  platform: string;
  chat_type: string;
  chat_id: string;
  thread_id: string | null;
  origin_user_id: string | null;
  system_prompt: string | null;
  parent_session_id: string | null;
  created_at: Date;
  ended_at: Date | null;
  end_reason: string | null;
  imported_end_reason: string | null;
  title: string | null;
  model: string | null;
  imported_usage: Record<string, unknown> | null;
  input_tokens: string | null;
  output_tokens: string | null;
  api_calls: string | null;
}

/** Herald's four end reasons in Hermes' words. */
const HERMES_END_REASON: Record<string, string> = { compression: 'compression', new: 'new_session', reset: 'session_reset', handoff: 'handoff' };

const seconds = (date: Date) => date.getTime() / 1000;

async function sessionRows(db: Db, profileId: string, userId: string): Promise<SessionRow[]> {
  // A session's own conversation calls, as Hermes counts a session's tokens and api_call_count:
  // the background reviews and compression summaries of it are in Herald's usage (GET /v1/usage).
  const result = await sql<SessionRow>`
    SELECT s.id, s.session_key, s.platform, s.chat_type, s.chat_id, s.thread_id, s.origin_user_id, s.system_prompt,
           s.parent_session_id, s.created_at, s.ended_at, s.end_reason, s.imported_end_reason, s.title, s.model, s.imported_usage,
           c.input_tokens, c.output_tokens, c.api_calls
      FROM sessions s
      LEFT JOIN LATERAL (SELECT sum(input_tokens) AS input_tokens, sum(output_tokens) AS output_tokens, count(*) AS api_calls
                           FROM model_calls m WHERE m.session_id = s.id AND m.kind = 'turn') c ON true
     WHERE s.profile_id = ${profileId} AND s.origin_user_id = ${userId}
     ORDER BY s.created_at, s.id`.execute(db);
  return result.rows;
}

/** The id a session has in Hermes: its own when it came from there. */
function hermesId(row: { id: string; session_key: string }): string {
  return row.session_key.startsWith('hermes:') ? row.session_key.slice('hermes:'.length) : row.id;
}

function promptHash(sqlite: SqliteDatabase, prompt: string): string {
  const hash = createHash('sha256').update(prompt).digest('hex');
  sqlite.run('INSERT OR IGNORE INTO system_prompts (hash, prompt) VALUES (?, ?)', [hash, prompt]);
  return hash;
}

function usageValues(row: SessionRow): (number | string | null)[] {
  const usage = row.imported_usage ?? {};
  const count = (key: string, fallback: string | null) => Number(usage[key] ?? fallback ?? 0) || 0;
  const value = (key: string) => (usage[key] === undefined ? null : (usage[key] as number | string | null));
  return [
    count('input_tokens', row.input_tokens), count('output_tokens', row.output_tokens), count('cache_read_tokens', null),
    count('cache_write_tokens', null), count('reasoning_tokens', null), count('api_call_count', row.api_calls),
    value('estimated_cost_usd'), value('actual_cost_usd'), value('cost_status'), value('cost_source'), value('billing_provider'),
    value('billing_base_url'), value('billing_mode'), value('pricing_version'),
  ];
}

const SESSION_INSERT = `INSERT INTO sessions (id, source, user_id, session_key, chat_id, chat_type, thread_id, model, system_prompt_hash,
  parent_session_id, started_at, ended_at, end_reason, title, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens,
  reasoning_tokens, api_call_count, estimated_cost_usd, actual_cost_usd, cost_status, cost_source, billing_provider, billing_base_url,
  billing_mode, pricing_version) VALUES (${Array.from({ length: 28 }, () => '?').join(', ')})`;

function writeSessions(sqlite: SqliteDatabase, rows: SessionRow[]): Map<string, string> {
  const ids = new Map(rows.map((row) => [row.id, hermesId(row)]));
  const statement = sqlite.prepare(SESSION_INSERT);
  for (const row of rows) {
    const userId = row.origin_user_id?.includes(':') ? row.origin_user_id.slice(row.origin_user_id.indexOf(':') + 1) : row.origin_user_id;
    statement.run([
      ids.get(row.id)!, row.platform, userId, `agent:main:${row.platform}:${row.chat_type}:${row.chat_id}`, row.chat_id, row.chat_type,
      row.thread_id, row.model, row.system_prompt === null ? null : promptHash(sqlite, row.system_prompt),
      row.parent_session_id === null ? null : (ids.get(row.parent_session_id) ?? null), seconds(row.created_at),
      row.ended_at === null ? null : seconds(row.ended_at),
      row.imported_end_reason ?? (row.end_reason === null ? null : (HERMES_END_REASON[row.end_reason] ?? row.end_reason)), row.title,
      ...usageValues(row),
    ]);
  }
  statement.free();
  return ids;
}

interface MessageRow {
  session_id: string;
  role: string;
  content: string;
  tool_calls: StoredToolCall[] | null;
  tool_call_id: string | null;
  tool_name: string | null;
  created_at: Date;
  reasoning: string | null;
  platform_message_id: string | null;
}

/** Herald's stored calls in OpenAI's shape, as Hermes keeps them. */
function openAiCalls(calls: StoredToolCall[] | null): string | null {
  if (calls === null || calls.length === 0) return null;
  return JSON.stringify(calls.map((call) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } })));
}

async function writeMessages(db: Db, sqlite: SqliteDatabase, ids: Map<string, string>): Promise<number> {
  const statement = sqlite.prepare(
    `INSERT INTO messages (session_id, role, content, tool_call_id, tool_calls, tool_name, timestamp, reasoning, platform_message_id,
       active, compacted) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 1, 0)`,
  );
  let count = 0;
  sqlite.exec('BEGIN');
  // A session at a time: a long history never sits in memory whole.
  for (const [heraldId, id] of ids) {
    const rows = await db
      .selectFrom('messages')
      .select(['session_id', 'role', 'content', 'tool_calls', 'tool_call_id', 'tool_name', 'created_at', 'reasoning', 'platform_message_id'])
      .where('session_id', '=', heraldId)
      .orderBy('seq')
      .execute();
    for (const row of rows as MessageRow[]) {
      statement.run([id, row.role, row.content, row.tool_call_id, openAiCalls(row.tool_calls), row.tool_name, seconds(row.created_at), row.reasoning, row.platform_message_id]);
      count += 1;
    }
  }
  sqlite.exec('COMMIT');
  statement.free();
  return count;
}

/** The person's sessions of the profile, with their messages, as a state.db file's bytes. */
export async function exportState(db: Db, profileId: string, userId: string): Promise<StateExport> {
  const SQL = await initSqlJs({ locateFile: (file) => require.resolve(`sql.js/dist/${file}`) });
  const sqlite = new SQL.Database();
  try {
    sqlite.exec(HERMES_SCHEMA_30);
    const rows = await sessionRows(db, profileId, userId);
    const ids = writeSessions(sqlite, rows);
    const messages = await writeMessages(db, sqlite, ids);
    return { sessions: rows.length, messages, bytes: sqlite.export() };
  } finally {
    sqlite.close();
  }
}
