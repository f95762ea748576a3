import { createHash } from 'node:crypto';
import type pg from 'pg';
import type { StoredToolCall } from '@herald/db';
import { importedSessionStates, importSessions } from '@herald/session';
import { importMessages, settleImportedMessages } from '@herald/transcript';
import { buildIndexes, setIndexesAside, shouldRebuild } from './bulk-indexes.ts';
import type { HermesMessage, HermesSession, HermesState } from './hermes-state.ts';

export interface HistoryReport {
  sessions: { imported: number; alreadyThere: number };
  /** Multimodal messages kept as readable text (Herald has no attachments yet). */
  multimodalAsText: number;
  messages: { imported: number; alreadyThere: number; skipped: Record<string, number> };
  /** Whether the search indexes were built once after the rows (a large import) or kept up row by row. */
  searchIndexes: 'rebuilt' | 'kept';
}

export interface HistoryTarget {
  profileId: string;
  /** The Herald person who owns the imported history (who may search it). */
  userId: string;
  /** Progress of a large import (every 50,000 messages read, then the index build): it takes a while. */
  onProgress?: (message: string) => void;
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
 * Sessions and messages, inside the caller's transaction. Sessions go through a staging table (INSERT ..
 * ON CONFLICT DO NOTHING, so a repeated import adds none); messages are COPYed straight into
 * messages with their session's scope columns, skipping those an earlier import stored, so
 * Postgres turns rows into search columns while this process reads the next ones. A large import
 * into a small table builds the secondary (search) indexes once afterwards (bulk-indexes.ts).
 */
export async function importHistory(client: pg.PoolClient, state: HermesState, target: HistoryTarget): Promise<HistoryReport> {
  const sessions = state.sessions();
  const known = new Set(sessions.map((session) => session.id));
  // The caller's transaction holds the whole home: nothing here commits.
  const importedSessions = await importSessions(client, sessionRows(sessions, target.profileId, known), target.profileId, target.userId);
  const rows: MessageTally = { skipped: {}, alreadyThere: 0, imported: 0, multimodal: 0, stored: await storedSessions(client, sessions, target.profileId) };
  // What this run adds: the home's rows less those an earlier import stored.
  const stored = [...rows.stored.values()].reduce((sum, session) => sum + session.lastSeq, 0);
  const rebuild = await shouldRebuild(client, 'messages', state.messageCount() - stored);
  const aside = rebuild ? await setIndexesAside(client, 'messages') : { definitions: [] };
  // Kept GIN indexes take a batch fastest through their pending list, merged once afterwards.
  if (!rebuild) await client.query(`SET LOCAL gin_pending_list_limit = '256MB'`);
  await importMessages(client, messageRows(state.messages(), target, known, rows));
  if (rebuild) target.onProgress?.(`building the search indexes of ${rows.imported.toLocaleString('en')} messages`);
  await buildIndexes(client, aside);
  return {
    sessions: { imported: importedSessions, alreadyThere: sessions.length - importedSessions },
    multimodalAsText: rows.multimodal,
    messages: { imported: rows.imported, alreadyThere: rows.alreadyThere, skipped: rows.skipped },
    searchIndexes: rebuild ? 'rebuilt' : 'kept',
  };
}

/** After the commit: fresh statistics for a rebuilt table, or the GIN pending lists merged. */
export async function settleIndexes(client: pg.PoolClient, report: HistoryReport): Promise<void> {
  if (report.searchIndexes === 'rebuilt' || report.messages.imported > 0) await settleImportedMessages(client, report.searchIndexes === 'rebuilt');
}

interface StoredSession {
  /** The last seq an earlier import stored (0: none). */
  lastSeq: number;
  scope: [profileId: string, ownerId: string | null, platform: string];
}

/** The imported sessions as stored now: their scope, and how many messages an earlier import left in each. */
async function storedSessions(client: pg.PoolClient, sessions: HermesSession[], profileId: string): Promise<Map<string, StoredSession>> {
  const states = await importedSessionStates(
    client,
    sessions.map((session) => importedSessionId(profileId, session.id)),
  );
  return new Map(states.map((state) => [state.id, { lastSeq: state.lastSeq, scope: [state.profileId, state.originUserId, state.platform] }]));
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
      clean(session.title),
      clean(session.model),
      session.endedAt === null ? null : new Date(session.endedAt * 1000).toISOString(),
      session.endedAt === null ? null : heraldEndReason(session.endReason),
      clean(session.endReason),
      // A session upstream recorded no usage for keeps none (a Herald-born session on its way back, an old layout).
      Object.values(session.usage).some((value) => value !== null && value !== 0) ? JSON.stringify(session.usage) : null,
    ];
  }
}

/** Hermes' end reasons in Herald's four words where one means the same; the rest keep only their upstream word. */
function heraldEndReason(reason: string | null): string | null {
  if (reason === 'compression') return 'compression';
  if (reason === 'new_session') return 'new';
  if (reason !== null && ['session_reset', 'session_switch', 'idle', 'daily', 'suspended'].includes(reason)) return 'reset';
  if (reason === 'handoff') return 'handoff';
  return null;
}

interface MessageTally {
  skipped: Record<string, number>;
  multimodal: number;
  alreadyThere: number;
  imported: number;
  /** Per Herald session id, as stored when the import began. */
  stored: Map<string, StoredSession>;
}

function* messageRows(messages: Iterable<HermesMessage>, target: HistoryTarget, known: Set<string>, tally: MessageTally): Generator<(string | null)[]> {
  let current = '';
  let sessionId = '';
  let session: StoredSession | undefined;
  let seq = 0;
  let read = 0;
  for (const message of messages) {
    read += 1;
    if (read % 50_000 === 0) target.onProgress?.(`${read.toLocaleString('en')} messages read`);
    const why = skipReason(message, known);
    if (why !== undefined) {
      tally.skipped[why] = (tally.skipped[why] ?? 0) + 1;
      continue;
    }
    if (message.sessionId !== current) {
      [current, sessionId, seq] = [message.sessionId, importedSessionId(target.profileId, message.sessionId), 0];
      session = tally.stored.get(sessionId);
    }
    seq += 1;
    if (seq <= (session?.lastSeq ?? 0)) {
      tally.alreadyThere += 1;
      continue;
    }
    tally.imported += 1;
    if (message.multimodal) tally.multimodal += 1;
    yield [
      sessionId,
      String(seq),
      message.role,
      clean(message.content) ?? '',
      toolCallsJson(message.toolCalls),
      clean(message.toolCallId),
      clean(message.toolName),
      new Date(message.timestamp * 1000).toISOString(),
      clean(message.reasoning),
      clean(message.platformMessageId),
      ...session!.scope,
    ];
  }
}

function skipReason(message: HermesMessage, known: Set<string>): string | undefined {
  if (!known.has(message.sessionId)) return 'no such session';
  if (message.rewound) return 'rewound in Hermes (hidden there too)';
  if (message.archived) return 'archived by an in-place compaction (Hermes replays the summary, not these)';
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
      arguments:
        typeof (call.function?.arguments ?? call.arguments) === 'string' ? String(call.function?.arguments ?? call.arguments) : JSON.stringify(call.function?.arguments ?? call.arguments ?? {}),
    }));
    return JSON.stringify(stored);
  } catch {
    return null;
  }
}
