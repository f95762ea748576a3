import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import type pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import type { StoredToolCall } from '@herald/db';
import type { HermesMessage, HermesSession, HermesState } from './hermes-state.ts';

export interface HistoryReport {
  sessions: { imported: number; alreadyThere: number };
  messages: { imported: number; alreadyThere: number; skipped: Record<string, number> };
}

export interface HistoryTarget {
  profileId: string;
  /** The Herald person who owns the imported history (who may search it). */
  userId: string;
  /** Called every 50,000 messages read: the import of a large home takes a while. */
  onProgress?: (messagesRead: number) => void;
}

const HERALD_ROLES = new Set(['user', 'assistant', 'tool']);

/**
 * The same Hermes session always maps to the same Herald id (a name-based UUID, version 5 layout),
 * so a second import finds what the first one wrote and adds nothing.
 */
export function importedSessionId(profileId: string, hermesId: string): string {
  const hash = createHash('sha1').update(`hermes:${profileId}:${hermesId}`).digest();
  hash[6] = (hash[6]! & 0x0f) | 0x50;
  hash[8] = (hash[8]! & 0x3f) | 0x80;
  const hex = hash.subarray(0, 16).toString('hex');
  return `${hex.slice(0, 8)}-${hex.slice(8, 12)}-${hex.slice(12, 16)}-${hex.slice(16, 20)}-${hex.slice(20)}`;
}

/**
 * Sessions and messages in one transaction: COPY into temporary tables (the fast path for a
 * million rows), then one INSERT .. SELECT each, ON CONFLICT DO NOTHING, so the search columns and
 * indexes are filled by the database as for any append and a repeated import changes nothing.
 */
export async function importHistory(client: pg.PoolClient, state: HermesState, target: HistoryTarget): Promise<HistoryReport> {
  const sessions = state.sessions();
  const known = new Set(sessions.map((session) => session.id));
  await client.query('BEGIN');
  try {
    await client.query(STAGING_TABLES);
    await copyRows(client, 'COPY hermes_sessions FROM STDIN', sessionRows(sessions, target.profileId, known));
    const importedSessions = await client.query(INSERT_SESSIONS, [target.profileId, target.userId]);
    const rows = { skipped: {} as Record<string, number>, alreadyThere: 0, seen: await importedSeqs(client, sessions, target.profileId) };
    await copyRows(client, 'COPY hermes_messages FROM STDIN', messageRows(state.messages(), target, known, rows));
    // GIN indexes take a large batch fastest through their pending list, merged once afterwards.
    await client.query(`SET LOCAL gin_pending_list_limit = '256MB'`);
    const importedMessages = await client.query(INSERT_MESSAGES);
    await client.query('COMMIT');
    await mergeGinPendingLists(client);
    return {
      sessions: { imported: importedSessions.rowCount ?? 0, alreadyThere: sessions.length - (importedSessions.rowCount ?? 0) },
      messages: { imported: importedMessages.rowCount ?? 0, alreadyThere: rows.alreadyThere, skipped: rows.skipped },
    };
  } catch (error) {
    await client.query('ROLLBACK');
    throw error;
  }
}

const STAGING_TABLES = `
  CREATE TEMPORARY TABLE hermes_sessions (
    id uuid, hermes_id text, platform text, chat_type text, chat_id text, thread_id text,
    system_prompt text, parent_id uuid, created_at timestamptz
  ) ON COMMIT DROP;
  CREATE TEMPORARY TABLE hermes_messages (
    session_id uuid, seq integer, role text, content text, tool_calls jsonb, tool_call_id text,
    tool_name text, created_at timestamptz
  ) ON COMMIT DROP`;

// Imported sessions get no route: they are history, not a chat that takes new messages.
const INSERT_SESSIONS = `
  INSERT INTO sessions (id, profile_id, session_key, platform, chat_type, chat_id, thread_id, origin_user_id,
                        system_prompt, parent_session_id, created_at, updated_at)
  SELECT id, $1, 'hermes:' || hermes_id, platform, chat_type, chat_id, thread_id, $2, system_prompt, parent_id,
         created_at, created_at
    FROM hermes_sessions
  ON CONFLICT (id) DO NOTHING`;

const INSERT_MESSAGES = `
  INSERT INTO messages (session_id, seq, role, content, tool_calls, tool_call_id, tool_name, created_at)
  SELECT session_id, seq, role, content, tool_calls, tool_call_id, tool_name, created_at FROM hermes_messages
  ON CONFLICT (session_id, seq) DO NOTHING`;

/** How many messages of each session an earlier import already stored: a re-import skips them unread by Postgres. */
async function importedSeqs(client: pg.PoolClient, sessions: HermesSession[], profileId: string): Promise<Map<string, number>> {
  const ids = sessions.map((session) => importedSessionId(profileId, session.id));
  const result = await client.query<{ session_id: string; seq: number }>(
    'SELECT session_id, max(seq) AS seq FROM messages WHERE session_id = ANY ($1::uuid[]) GROUP BY session_id',
    [ids],
  );
  return new Map(result.rows.map((row) => [row.session_id, row.seq]));
}

async function mergeGinPendingLists(client: pg.PoolClient): Promise<void> {
  await client.query(`
    SELECT gin_clean_pending_list(i.indexrelid::regclass)
      FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid JOIN pg_am am ON am.oid = c.relam
     WHERE i.indrelid = 'messages'::regclass AND am.amname = 'gin'`);
}

async function copyRows(client: pg.PoolClient, statement: string, rows: Iterable<(string | null)[]>): Promise<void> {
  await pipeline(Readable.from(copyLines(rows)), client.query(copyFrom(statement)));
}

/** COPY's text format, many rows per chunk: one write per row would dominate a large import. */
function* copyLines(rows: Iterable<(string | null)[]>): Generator<string> {
  let chunk = '';
  for (const row of rows) {
    chunk += row.map(copyField).join('\t') + '\n';
    if (chunk.length > 1 << 20) {
      yield chunk;
      chunk = '';
    }
  }
  if (chunk !== '') yield chunk;
}

function copyField(value: string | null): string {
  if (value === null) return '\\N';
  return value.replace(/[\\\t\n\r]/g, (c) => (c === '\\' ? '\\\\' : c === '\t' ? '\\t' : c === '\n' ? '\\n' : '\\r'));
}

/** Postgres text cannot hold NUL; Hermes' SQLite can. */
function clean(value: string | null): string | null {
  return value === null ? null : value.replaceAll('\u0000', '');
}

function* sessionRows(sessions: HermesSession[], profileId: string, known: Set<string>): Generator<(string | null)[]> {
  for (const session of sessions) {
    const parent = session.parentId !== null && known.has(session.parentId) ? importedSessionId(profileId, session.parentId) : null;
    yield [
      importedSessionId(profileId, session.id),
      clean(session.id),
      clean(session.source),
      clean(session.chatType) ?? 'dm',
      clean(session.chatId) ?? clean(session.id),
      clean(session.threadId),
      clean(session.systemPrompt),
      parent,
      new Date(session.startedAt * 1000).toISOString(),
    ];
  }
}

interface MessageTally {
  skipped: Record<string, number>;
  alreadyThere: number;
  /** Per Herald session id: the last seq an earlier import stored. */
  seen: Map<string, number>;
}

function* messageRows(messages: Iterable<HermesMessage>, target: HistoryTarget, known: Set<string>, tally: MessageTally): Generator<(string | null)[]> {
  let current = '';
  let sessionId = '';
  let seq = 0;
  let read = 0;
  for (const message of messages) {
    read += 1;
    if (read % 50_000 === 0) target.onProgress?.(read);
    const why = skipReason(message, known);
    if (why !== undefined) {
      tally.skipped[why] = (tally.skipped[why] ?? 0) + 1;
      continue;
    }
    if (message.sessionId !== current) [current, sessionId, seq] = [message.sessionId, importedSessionId(target.profileId, message.sessionId), 0];
    seq += 1;
    if (seq <= (tally.seen.get(sessionId) ?? 0)) {
      tally.alreadyThere += 1;
      continue;
    }
    yield [
      sessionId,
      String(seq),
      message.role,
      clean(message.content) ?? '',
      toolCallsJson(message.toolCalls),
      clean(message.toolCallId),
      clean(message.toolName),
      new Date(message.timestamp * 1000).toISOString(),
    ];
  }
}

function skipReason(message: HermesMessage, known: Set<string>): string | undefined {
  if (!known.has(message.sessionId)) return 'no such session';
  if (message.rewound) return 'rewound in Hermes (hidden there too)';
  if (!HERALD_ROLES.has(message.role)) return `role ${message.role}`;
  return undefined;
}

/** OpenAI's [{id, function: {name, arguments}}] as Herald stores calls; unreadable JSON is dropped. */
function toolCallsJson(text: string | null): string | null {
  if (text === null || text === '') return null;
  try {
    const calls = JSON.parse(clean(text)!) as unknown;
    if (!Array.isArray(calls) || calls.length === 0) return null;
    const stored: StoredToolCall[] = calls.map((call: { id?: unknown; name?: unknown; arguments?: unknown; function?: { name?: unknown; arguments?: unknown } }) => ({
      id: String(call.id ?? ''),
      name: String(call.function?.name ?? call.name ?? ''),
      arguments: typeof (call.function?.arguments ?? call.arguments) === 'string' ? String(call.function?.arguments ?? call.arguments) : JSON.stringify(call.function?.arguments ?? call.arguments ?? {}),
    }));
    return JSON.stringify(stored);
  } catch {
    return null;
  }
}
