import { createHash } from 'node:crypto';
import type { Database as SqliteDatabase } from 'sql.js';
import type { StoredToolCall } from '@herald/db';
import type { ExportedMessage, ExportedSession } from '@herald/session';

// The writing side of `herald export`: Herald's sessions and messages into a Hermes state.db (SQLite,
// upstream's layout), whose tables are called sessions and messages too.

/** Herald's four end reasons in Hermes' words. */
const HERMES_END_REASON: Record<string, string> = { compression: 'compression', new: 'new_session', reset: 'session_reset', handoff: 'handoff' };

const seconds = (date: Date) => date.getTime() / 1000;

/** The id a session has in Hermes: its own when it came from there. */
function hermesId(row: { id: string; session_key: string }): string {
  return row.session_key.startsWith('hermes:') ? row.session_key.slice('hermes:'.length) : row.id;
}

function promptHash(sqlite: SqliteDatabase, prompt: string): string {
  const hash = createHash('sha256').update(prompt).digest('hex');
  sqlite.run('INSERT OR IGNORE INTO system_prompts (hash, prompt) VALUES (?, ?)', [hash, prompt]);
  return hash;
}

function usageValues(row: ExportedSession): (number | string | null)[] {
  const usage = row.imported_usage ?? {};
  const count = (key: string, fallback: string | null) => Number(usage[key] ?? fallback ?? 0) || 0;
  const value = (key: string) => (usage[key] === undefined ? null : (usage[key] as number | string | null));
  return [
    count('input_tokens', row.input_tokens),
    count('output_tokens', row.output_tokens),
    count('cache_read_tokens', null),
    count('cache_write_tokens', null),
    count('reasoning_tokens', null),
    count('api_call_count', row.api_calls),
    value('estimated_cost_usd'),
    value('actual_cost_usd'),
    value('cost_status'),
    value('cost_source'),
    value('billing_provider'),
    value('billing_base_url'),
    value('billing_mode'),
    value('pricing_version'),
  ];
}

const SESSION_INSERT = `INSERT INTO sessions (id, source, user_id, session_key, chat_id, chat_type, thread_id, model, system_prompt_hash,
  parent_session_id, started_at, ended_at, end_reason, title, input_tokens, output_tokens, cache_read_tokens, cache_write_tokens,
  reasoning_tokens, api_call_count, estimated_cost_usd, actual_cost_usd, cost_status, cost_source, billing_provider, billing_base_url,
  billing_mode, pricing_version) VALUES (${Array.from({ length: 28 }, () => '?').join(', ')})`;

/** Writes the sessions under their Hermes ids; returns Herald's id to Hermes' for each. */
export function writeSessions(sqlite: SqliteDatabase, rows: ExportedSession[]): Map<string, string> {
  const ids = new Map(rows.map((row) => [row.id, hermesId(row)]));
  const statement = sqlite.prepare(SESSION_INSERT);
  for (const row of rows) {
    const userId = row.origin_user_id?.includes(':') ? row.origin_user_id.slice(row.origin_user_id.indexOf(':') + 1) : row.origin_user_id;
    statement.run([
      ids.get(row.id)!,
      row.platform,
      userId,
      `agent:main:${row.platform}:${row.chat_type}:${row.chat_id}`,
      row.chat_id,
      row.chat_type,
      row.thread_id,
      row.model,
      row.system_prompt === null ? null : promptHash(sqlite, row.system_prompt),
      row.parent_session_id === null ? null : (ids.get(row.parent_session_id) ?? null),
      seconds(row.created_at),
      row.ended_at === null ? null : seconds(row.ended_at),
      row.imported_end_reason ?? (row.end_reason === null ? null : (HERMES_END_REASON[row.end_reason] ?? row.end_reason)),
      row.title,
      ...usageValues(row),
    ]);
  }
  statement.free();
  return ids;
}

/** Herald's stored calls in OpenAI's shape, as Hermes keeps them. */
function openAiCalls(calls: StoredToolCall[] | null): string | null {
  if (calls === null || calls.length === 0) return null;
  return JSON.stringify(calls.map((call) => ({ id: call.id, type: 'function', function: { name: call.name, arguments: call.arguments } })));
}

/** Writes the messages of each session, read a session at a time by `read` (Herald's id) under its Hermes id. */
export async function writeMessages(sqlite: SqliteDatabase, ids: Map<string, string>, read: (heraldId: string) => Promise<ExportedMessage[]>): Promise<number> {
  const statement = sqlite.prepare(
    `INSERT INTO messages (session_id, role, content, tool_call_id, tool_calls, tool_name, timestamp, reasoning, platform_message_id,
       active, compacted) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, 1, 0)`,
  );
  let count = 0;
  sqlite.exec('BEGIN');
  // A session at a time: a long history never sits in memory whole.
  for (const [heraldId, id] of ids) {
    for (const row of await read(heraldId)) {
      statement.run([id, row.role, row.content, row.tool_call_id, openAiCalls(row.tool_calls), row.tool_name, seconds(row.created_at), row.reasoning, row.platform_message_id]);
      count += 1;
    }
  }
  sqlite.exec('COMMIT');
  statement.free();
  return count;
}
