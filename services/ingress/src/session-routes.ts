import { API_PLATFORM, apiUserId, CHAT_PLATFORMS, isUuid, PLATFORM_FACTS } from '@herald/core';
import { SCHEDULED_PLATFORM } from '@herald/cron';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { listSessions, sessionExists } from '@herald/session';
import { loadTranscript, loadTranscriptPage } from '@herald/transcript';
import type { SessionSummary } from '@herald/session';
import type { PageAnchor, StoredMessage } from '@herald/transcript';
import type { Db, ReadRouting } from '@herald/db';
import { messageAttachments } from '@herald/attachments';
import type { Attachment } from '@herald/attachments';
import { sendError } from './api-errors.ts';
import { readDbFor } from './read-your-writes.ts';
import { firstIssue } from './message-body.ts';
import { withContract } from './contracts/route-contract.ts';
import { idParams } from './contracts/common.ts';
import { sessionList, transcriptPage } from './contracts/session-views.ts';

const MAX_PAGE = 500;

/**
 * The platforms a session can be on, for the list's platform filter: the API, each chat platform
 * of the registry, and scheduled runs. The console offers these instead of a list of its own, so a
 * platform added to the registry shows up there without a change to the console.
 */
const SESSION_PLATFORMS = [
  { name: API_PLATFORM, label: 'API' },
  ...CHAT_PLATFORMS.map((platform) => ({ name: platform, label: PLATFORM_FACTS[platform].label })),
  { name: SCHEDULED_PLATFORM, label: 'Cron' },
];

const name = z.string().trim().min(1).max(256);
const listQuery = z.strictObject({
  profile: name.optional(),
  platform: z
    .string()
    .regex(/^[a-z_]{1,32}$/, { error: 'expected a platform name' })
    .optional(),
  user_id: name.optional(),
  chat_id: name.optional(),
  state: z.enum(['live', 'ended']).optional(),
  parent_id: z.uuid({ error: 'expected a session id (uuid)' }).optional(),
  before: z.uuid({ error: 'expected a session id (uuid)' }).optional(),
  limit: z.coerce.number({ error: 'expected a number' }).int().min(1).max(200).default(50),
  // Child sessions of delegate_task are listed only when asked for.
  subagents: z.enum(['true', 'false'], { error: 'expected true or false' }).optional(),
});

const seq = z.coerce
  .number({ error: 'expected a message seq' })
  .int()
  .min(0)
  .max(2 ** 31 - 1);
const pageQuery = z
  .strictObject({
    limit: z.coerce.number({ error: 'expected a number' }).int().min(1).max(MAX_PAGE).optional(),
    before: seq.optional(),
    after: seq.optional(),
    around: z
      .string()
      .regex(/^[0-9]{1,18}$/, { error: 'expected a message id' })
      .optional(),
  })
  .refine((query) => [query.before, query.after, query.around].filter((value) => value !== undefined).length <= 1, {
    error: 'before, after and around: give at most one',
    path: ['before'],
  });

/** The first problem as a 400's field and message; an unknown parameter is named itself, not `body`. */
function queryIssue(error: z.ZodError): { field: string; message: string } {
  const issue = error.issues[0];
  if (issue?.code === 'unrecognized_keys' && issue.keys[0] !== undefined) return { field: issue.keys[0], message: `${issue.keys[0]}: not a parameter of this route` };
  return firstIssue(error);
}

function summaryView(session: SessionSummary) {
  return {
    session_id: session.id,
    session_key: session.sessionKey,
    profile: session.profileId,
    platform: session.platform,
    chat_type: session.chatType,
    chat_id: session.chatId,
    thread_id: session.threadId,
    origin_user_id: session.originUserId,
    parent_session_id: session.parentSessionId,
    live: session.live,
    messages: session.lastSeq,
    children: session.children,
    pending_waits: session.pendingWaits,
    created_at: session.createdAt.toISOString(),
    updated_at: session.updatedAt.toISOString(),
  };
}

function attachmentView(file: Attachment) {
  return { name: file.name, mime: file.mime, size: file.size, sha256: file.sha256, kind: file.kind };
}

/** The messages as the API shows them, each user message with the files it carried. */
async function messageViews(db: Db, sessionId: string, messages: readonly StoredMessage[]) {
  const files = await messageAttachments(db, sessionId, messages);
  return messages.map((message) => {
    const carried = files.get(message.id);
    return { ...messageView(message), ...(carried === undefined ? {} : { attachments: carried.map(attachmentView) }) };
  });
}

function messageView(message: StoredMessage) {
  return {
    id: message.id,
    seq: message.seq,
    role: message.role,
    content: message.content,
    ...(message.toolCalls
      ? {
          tool_calls: message.toolCalls.map((call) => ({
            id: call.id,
            type: 'function',
            function: { name: call.name, arguments: call.arguments },
            name: call.name,
            arguments: call.arguments,
          })),
        }
      : {}),
    ...(message.toolCallId === undefined ? {} : { tool_call_id: message.toolCallId }),
    ...(message.toolName === undefined ? {} : { name: message.toolName }),
    created_at: message.createdAt.toISOString(),
  };
}

function anchorOf(query: { before?: number | undefined; after?: number | undefined; around?: string | undefined }): PageAnchor {
  if (query.before !== undefined) return { kind: 'before', seq: query.before };
  if (query.after !== undefined) return { kind: 'after', seq: query.after };
  if (query.around !== undefined) return { kind: 'around', messageId: query.around };
  return { kind: 'latest' };
}

/**
 * The session list (filters, keyset pages, newest first) and one session's transcript, whole or by
 * keyset pages on seq: what the console and the CLI read sessions through. Both tolerate lag: they
 * read the replica when one is configured, the primary for a reader who just wrote (read-your-writes.ts).
 */
export function registerSessionRoutes(app: FastifyInstance, reads: ReadRouting): void {
  app.get('/v1/sessions', withContract({ summary: 'Sessions, newest first, keyset paged', tags: ['sessions'], querystring: listQuery, response: { 200: sessionList } }), async (request, reply) => {
    const parsed = listQuery.safeParse(request.query ?? {});
    if (!parsed.success) {
      const issue = queryIssue(parsed.error);
      return sendError(reply, 400, 'invalid_request', issue.message, issue.field);
    }
    const query = parsed.data;
    const filter = {
      profileId: query.profile,
      platform: query.platform,
      userId: query.user_id === undefined ? undefined : apiUserId(query.user_id),
      chatId: query.chat_id,
      state: query.state,
      parentSessionId: query.parent_id,
      beforeSessionId: query.before,
      subagents: query.subagents === 'true',
    };
    const { db } = await readDbFor(reads, request);
    const page = await listSessions(db, filter, query.limit);
    const last = page.sessions.at(-1);
    return { sessions: page.sessions.map(summaryView), next_before: page.more && last ? last.id : null, platforms: SESSION_PLATFORMS };
  });

  app.get<{ Params: { id: string } }>(
    '/v1/sessions/:id/messages',
    withContract({ summary: 'A session transcript, whole or by keyset pages on seq', tags: ['sessions'], params: idParams, querystring: pageQuery, response: { 200: transcriptPage } }),
    async (request, reply) => {
      if (!isUuid(request.params.id)) return sendError(reply, 404, 'not_found', 'no such session');
      const parsed = pageQuery.safeParse(request.query ?? {});
      if (!parsed.success) {
        const issue = queryIssue(parsed.error);
        return sendError(reply, 400, 'invalid_request', issue.message, issue.field);
      }
      const { db } = await readDbFor(reads, request);
      const sessionId = request.params.id;
      if (!(await sessionExists(db, sessionId))) return sendError(reply, 404, 'not_found', 'no such session');
      const query = parsed.data;
      const paged = query.limit !== undefined || query.before !== undefined || query.after !== undefined || query.around !== undefined;
      if (!paged) return { messages: await messageViews(db, sessionId, await loadTranscript(db, sessionId)) };
      const page = await loadTranscriptPage(db, sessionId, anchorOf(query), query.limit ?? 100);
      if (!page) return sendError(reply, 404, 'not_found', 'around: no such message in this session', 'around');
      return { messages: await messageViews(db, sessionId, page.messages), has_before: page.hasBefore, has_after: page.hasAfter };
    },
  );
}
