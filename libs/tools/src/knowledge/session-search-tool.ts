import { z } from 'zod';
import { sql } from 'kysely';
import { canSeeSession, MAX_QUERY_CHARS, messageVisible, SearchQueryError, searchHistory, visibleSessions } from '@herald/search';
import type { Db, MessageRole } from '@herald/db';
import type { SearchScope } from '@herald/search';
import { defineTool } from '../shared/tool.ts';

/** Hermes' bounds: limit 3 (1-10), window 5 (1-20); READ shows the first 20 and last 10 messages. */
export const SESSION_SEARCH_DEFAULT_LIMIT = 3;
export const SESSION_SEARCH_MAX_LIMIT = 10;
export const SESSION_SEARCH_DEFAULT_WINDOW = 5;
export const SESSION_SEARCH_MAX_WINDOW = 20;
const READ_HEAD = 20;
const READ_TAIL = 10;
const PREVIEW_CHARS = 300;

const ROLES = ['user', 'assistant', 'tool'] as const;

const sessionSearchArgs = z.object({
  query: z.string().max(MAX_QUERY_CHARS).optional().describe('Words to find; any language'),
  session_id: z.string().max(64).optional().describe('A session from an earlier result'),
  around_message_id: z.coerce.number().int().min(1).optional().describe('With session_id: show the messages around this one'),
  window: z.number().int().min(1).max(SESSION_SEARCH_MAX_WINDOW).optional().describe('Messages each side (default 5)'),
  limit: z.number().int().min(1).max(SESSION_SEARCH_MAX_LIMIT).optional().describe('Sessions to return (default 3)'),
  role_filter: z.string().max(40).optional().describe('Comma-separated roles to search: user, assistant, tool (default user,assistant)'),
});

type Args = z.infer<typeof sessionSearchArgs>;

function preview(text: string, max = PREVIEW_CHARS): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max)}...` : flat;
}

function roles(filter: string | undefined): MessageRole[] | string {
  if (filter === undefined || filter.trim() === '') return ['user', 'assistant'];
  const parts = filter
    .split(',')
    .map((part) => part.trim().toLowerCase())
    .filter((part) => part.length > 0);
  const bad = parts.filter((part) => !(ROLES as readonly string[]).includes(part));
  if (bad.length > 0) return `role_filter: unknown role ${bad.join(', ')}; use user, assistant, tool`;
  return parts as MessageRole[];
}

interface MessageRow {
  id: string;
  seq: number;
  role: MessageRole;
  content: string;
  tool_name: string | null;
  created_at: Date;
}

function messageView(row: MessageRow, anchor?: string) {
  return {
    message_id: Number(row.id),
    role: row.role,
    ...(row.tool_name === null ? {} : { tool_name: row.tool_name }),
    when: row.created_at.toISOString(),
    text: preview(row.content),
    ...(anchor === row.id ? { anchor: true } : {}),
  };
}

async function discover(db: Db, scope: SearchScope, args: Args, exclude: string[], roleList: MessageRole[]) {
  const query = args.query ?? '';
  const result = await searchHistory(db, scope, {
    query,
    roles: roleList,
    excludeSessionIds: exclude,
    limit: args.limit ?? SESSION_SEARCH_DEFAULT_LIMIT,
    hitsPerSession: 2,
  });
  return {
    success: true,
    mode: 'discover',
    query,
    route: result.route,
    results: result.sessions.map((session) => ({
      session_id: session.sessionId,
      when: session.startedAt.toISOString(),
      source: session.platform,
      chat_type: session.chatType,
      matches: session.hits.map((hit) => ({
        message_id: Number(hit.messageId),
        role: hit.role,
        when: hit.createdAt.toISOString(),
        snippet: hit.snippet,
      })),
    })),
    count: result.sessions.length,
    messages_matched: result.matched,
    hint: 'Read more with session_id and around_message_id (window 1-20).',
  };
}

async function scroll(db: Db, scope: SearchScope, sessionId: string, aroundId: number, window: number) {
  const visible = messageVisible(scope);
  const anchor = await sql<{ id: string; seq: number }>`
    SELECT id::text AS id, seq FROM messages m WHERE session_id = ${sessionId}::uuid AND id = ${aroundId} AND ${visible}`.execute(db);
  const at = anchor.rows[0];
  if (!at) return { success: false, error: `message ${aroundId} is not in session ${sessionId}` };
  const rows = await sql<MessageRow>`
    SELECT id::text AS id, seq, role, content, tool_name, created_at FROM messages m
    WHERE session_id = ${sessionId}::uuid AND seq BETWEEN ${at.seq - window} AND ${at.seq + window} AND ${visible}
    ORDER BY seq`.execute(db);
  const around = await sql<{ before: string; after: string }>`
    SELECT count(*) FILTER (WHERE seq < ${at.seq - window})::text AS before,
           count(*) FILTER (WHERE seq > ${at.seq + window})::text AS after
    FROM messages m WHERE session_id = ${sessionId}::uuid AND ${visible}`.execute(db);
  return {
    success: true,
    mode: 'scroll',
    session_id: sessionId,
    messages: rows.rows.map((row) => messageView(row, at.id)),
    messages_before: Number(around.rows[0]?.before ?? 0),
    messages_after: Number(around.rows[0]?.after ?? 0),
  };
}

async function read(db: Db, scope: SearchScope, sessionId: string) {
  // The first READ_HEAD and the last READ_TAIL messages, in order, each once.
  const rows = await sql<MessageRow & { position: string; total: string }>`
    SELECT * FROM (
      SELECT id::text AS id, seq, role, content, tool_name, created_at,
             row_number() OVER (ORDER BY seq)::text AS position, count(*) OVER ()::text AS total
      FROM messages m WHERE session_id = ${sessionId}::uuid AND ${messageVisible(scope)}) numbered
    WHERE position::int <= ${READ_HEAD} OR position::int > total::int - ${READ_TAIL}
    ORDER BY seq`.execute(db);
  const total = Number(rows.rows[0]?.total ?? 0);
  const head = rows.rows.filter((row) => Number(row.position) <= READ_HEAD);
  const tail = rows.rows.filter((row) => Number(row.position) > READ_HEAD);
  return {
    success: true,
    mode: 'read',
    session_id: sessionId,
    messages: head.map((row) => messageView(row)),
    ...(tail.length > 0 ? { omitted: total - head.length - tail.length, last_messages: tail.map((row) => messageView(row)) } : {}),
  };
}

async function browse(db: Db, scope: SearchScope, exclude: string[], limit: number) {
  const visible = messageVisible(scope);
  const rows = await sql<{ id: string; platform: string; chat_type: string; created_at: Date; last_at: Date | null; first_text: string | null; messages: string }>`
    WITH visible AS (${visibleSessions(scope)})
    SELECT v.id, v.platform, v.chat_type, v.created_at,
      (SELECT max(m.created_at) FROM messages m WHERE m.session_id = v.id AND ${visible}) AS last_at,
      (SELECT m.content FROM messages m WHERE m.session_id = v.id AND m.role = 'user' AND ${visible} ORDER BY m.seq LIMIT 1) AS first_text,
      (SELECT count(*) FROM messages m WHERE m.session_id = v.id AND ${visible})::text AS messages
    FROM visible v WHERE v.id <> ALL (${exclude}::uuid[])
    ORDER BY v.created_at DESC LIMIT ${limit}`.execute(db);
  return {
    success: true,
    mode: 'browse',
    results: rows.rows.map((row) => ({
      session_id: row.id,
      when: row.created_at.toISOString(),
      last_activity: row.last_at?.toISOString() ?? null,
      source: row.platform,
      chat_type: row.chat_type,
      messages: Number(row.messages),
      first_message: row.first_text === null ? null : preview(row.first_text, 200),
    })),
    count: rows.rows.length,
  };
}

export const sessionSearchTool = defineTool({
  name: 'session_search',
  toolset: 'session_search',
  description:
    'Search past conversations (never this one). query: words, "quoted phrase", OR, -exclude; returns sessions with ' +
    'snippets and message ids. session_id + around_message_id: read around a match. session_id alone: its start and end. ' +
    'No arguments: recent sessions. History may be outdated: check the source before relying on it.',
  guidance: 'When the person refers to something from an earlier conversation, use session_search to find it instead of guessing; read around the best match before quoting it.',
  schema: sessionSearchArgs,
  replaySafe: true,
  async execute(args, context) {
    const scope: SearchScope = { profileId: context.profileId, userId: context.userId };
    // Only the asking session is in the model's context. Its ancestors, ended by compression, are
    // there as a summary only, so their messages are searchable like any earlier session's.
    const lineage = [context.sessionId];
    const limit = args.limit ?? SESSION_SEARCH_DEFAULT_LIMIT;
    if (args.session_id !== undefined) {
      if (lineage.includes(args.session_id)) {
        return JSON.stringify({ success: false, error: 'that is the current conversation; it is already in your context' });
      }
      if (!(await canSeeSession(context.db, scope, args.session_id))) {
        return JSON.stringify({ success: false, error: `no session ${args.session_id} that this person may see` });
      }
      if (args.around_message_id !== undefined) {
        return JSON.stringify(await scroll(context.db, scope, args.session_id, args.around_message_id, args.window ?? SESSION_SEARCH_DEFAULT_WINDOW));
      }
      return JSON.stringify(await read(context.db, scope, args.session_id));
    }
    if (args.query !== undefined && args.query.trim() !== '') {
      const roleList = roles(args.role_filter);
      if (typeof roleList === 'string') return JSON.stringify({ success: false, error: roleList });
      try {
        return JSON.stringify(await discover(context.db, scope, args, lineage, roleList));
      } catch (error) {
        if (SearchQueryError.isInstance(error)) return JSON.stringify({ success: false, error: `query: ${error.message}` });
        throw error;
      }
    }
    return JSON.stringify(await browse(context.db, scope, lineage, limit));
  },
});
