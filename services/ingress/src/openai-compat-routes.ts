import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { apiUserId } from '@herald/core';
import { mayAct, personKeyOf } from '@herald/people';
import { eventUsage, getEvent } from '@herald/session';
import { BacklogFullError } from '@herald/inbox';
import { LimitExceededError } from '@herald/limits';
import type { AcceptedEvent } from '@herald/inbox';
import { principalOfRequest } from './api-auth.ts';
import { acceptApiMessage } from './message-routes.ts';
import type { MessageRouteDependencies } from './message-routes.ts';
import { chatCompletionBody, newestUserText } from './openai-compat-body.ts';
import type { ChatCompletionBody } from './openai-compat-body.ts';
import { firstIssue } from './message-body.ts';
import { profileIds, profileState } from './profile-exists.ts';
import { waitForReply } from './reply-waiter.ts';
import { followTurn } from './turn-follow.ts';
import { openEventStream } from './sse.ts';
import { withContract } from './contracts/route-contract.ts';
import { chatCompletion, modelList } from './contracts/openai-views.ts';
import { z } from 'zod';

/** How long a non-streamed completion waits for its turn before answering what it has. */
const COMPLETION_WAIT_MS = 600_000;
const CHAT_ID = /^[\w.:@-]{1,128}$/;

/** Errors in OpenAI's shape (what its clients read) with Herald's `code` in it as on every route. */
function openAiError(reply: FastifyReply, status: number, code: string, message: string, param: string | null = null): FastifyReply {
  const type = status === 401 ? 'authentication_error' : status === 429 ? 'rate_limit_error' : status >= 500 ? 'server_error' : 'invalid_request_error';
  return reply.code(status).send({ error: { message, type, param, code } });
}

/** The front end's chat: X-Herald-Chat-Id (an empty one is not given), else the `user` field, else one shared chat. */
function chatKeyOf(request: FastifyRequest, body: ChatCompletionBody): string | undefined {
  const header = request.headers['x-herald-chat-id'];
  const given = typeof header === 'string' && header.trim() !== '' ? header.trim() : undefined;
  const chat = given ?? body.user ?? 'default';
  return CHAT_ID.test(chat) ? chat : undefined;
}

/**
 * Who speaks, and the Herald chat the front end's chat maps to. A person (a personal token) speaks
 * as their key whatever `user` says, in chats of their own: the chat is scoped by their key (a `/`
 * no chat key has keeps it unambiguous), so two people's `chat-a` are two sessions and no `user`
 * reaches anyone else's. The bootstrap token names anyone: `user` (a linked id is its person's key).
 */
async function speakerOf(deps: MessageRouteDependencies, request: FastifyRequest, body: ChatCompletionBody, chat: string): Promise<{ userId: string; chatId: string }> {
  const principal = principalOfRequest(request);
  if (principal.kind === 'person') return { userId: principal.key, chatId: `${principal.key}/${chat}` };
  return { userId: await personKeyOf(deps.db, apiUserId(body.user ?? chat), deps.profiles), chatId: chat };
}

type Parsed = { body: ChatCompletionBody; chatId: string; userId: string; text: string };

async function parse(deps: MessageRouteDependencies, request: FastifyRequest, reply: FastifyReply): Promise<Parsed | FastifyReply> {
  const parsed = chatCompletionBody.safeParse(request.body);
  if (!parsed.success) {
    const issue = firstIssue(parsed.error);
    return openAiError(reply, 400, 'invalid_request', issue.message, issue.field);
  }
  const body = parsed.data;
  // A deleted profile takes no new messages: to a client it is a model that is gone.
  if ((await profileState(deps.db, body.model)) !== 'active') {
    return openAiError(reply, 404, 'model_not_found', `model: no profile named ${JSON.stringify(body.model)} (GET /v1/models lists them)`, 'model');
  }
  const chat = chatKeyOf(request, body);
  if (chat === undefined) return openAiError(reply, 400, 'invalid_request', 'X-Herald-Chat-Id / user: 1-128 letters, digits and . : @ _ -', 'user');
  const text = newestUserText(body);
  if (text === undefined || text.trim() === '') return openAiError(reply, 400, 'invalid_request', 'messages: no user message with text', 'messages');
  if (text.length > deps.config.limits.maxMessageChars) {
    return openAiError(reply, 413, 'payload_too_large', `messages: the newest user message is over ${deps.config.limits.maxMessageChars} characters (HERALD_MAX_MESSAGE_CHARS)`, 'messages');
  }
  return { body, ...(await speakerOf(deps, request, body, chat)), text };
}

async function accept(deps: MessageRouteDependencies, reply: FastifyReply, input: Parsed): Promise<AcceptedEvent | FastifyReply> {
  try {
    return await acceptApiMessage(deps, {
      profileId: input.body.model,
      chatId: input.chatId,
      threadId: undefined,
      userId: input.userId,
      userName: undefined,
      text: input.text,
      dedupeKey: undefined,
    });
  } catch (error) {
    if (error instanceof BacklogFullError) return openAiError(reply, 429, 'backlog_full', error.message);
    if (error instanceof LimitExceededError) {
      reply.header('retry-after', String(error.retryAfterSeconds));
      return openAiError(reply, 429, 'limit_exceeded', error.message);
    }
    throw error;
  }
}

/** What a person is asked when the turn waits on them, as the assistant's words. */
function waitingText(data: { kind: string; prompt: string; choices: string[] | null }): string {
  const answer = data.kind === 'approval' ? 'Reply /approve, /approve session or /deny.' : 'Reply with your answer.';
  return `${data.prompt}${data.choices ? `\n\nChoices: ${data.choices.join(', ')}` : ''}\n\n${answer}`;
}

function completionBase(eventId: string, model: string) {
  return { id: `chatcmpl-${eventId}`, created: Math.floor(Date.now() / 1000), model, system_fingerprint: null };
}

async function usageOf(deps: MessageRouteDependencies, eventId: string) {
  const usage = await eventUsage(deps.db, eventId);
  return { prompt_tokens: usage.inputTokens, completion_tokens: usage.outputTokens, total_tokens: usage.inputTokens + usage.outputTokens };
}

/** The turn streamed as chat.completion.chunk events, ended by a finish chunk (and usage when asked) and [DONE]. */
async function streamCompletion(deps: MessageRouteDependencies, request: FastifyRequest, reply: FastifyReply, accepted: AcceptedEvent, body: ChatCompletionBody): Promise<void> {
  const stream = openEventStream(request, reply, { 'x-herald-event-id': accepted.eventId, 'x-herald-session-id': accepted.sessionId });
  const base = { ...completionBase(accepted.eventId, body.model), object: 'chat.completion.chunk' };
  const chunk = (delta: Record<string, unknown>, finish: string | null = null) => ({ ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] });
  try {
    stream.send(undefined, chunk({ role: 'assistant', content: '' }));
    for await (const item of followTurn(deps, accepted.eventId, undefined, stream.signal)) {
      if (item.event === 'delta') stream.send(undefined, chunk({ content: item.data.text }));
      else if (item.event === 'waiting') {
        stream.send(undefined, chunk({ content: waitingText(item.data) }));
        break;
      } else if (item.event === 'error') stream.send(undefined, { error: { message: item.data.message, type: 'server_error', param: null, code: item.data.code } });
    }
    stream.send(undefined, chunk({}, 'stop'));
    if (body.stream_options?.include_usage === true) stream.send(undefined, { ...base, choices: [], usage: await usageOf(deps, accepted.eventId) });
    stream.send(undefined, '[DONE]');
  } catch (error) {
    deps.logger.warn({ err: error, eventId: accepted.eventId }, 'chat completion stream failed');
  } finally {
    stream.end();
  }
}

/** The turn's committed reply (or the question it waits on) as one chat.completion. */
async function wholeCompletion(deps: MessageRouteDependencies, request: FastifyRequest, reply: FastifyReply, accepted: AcceptedEvent, body: ChatCompletionBody) {
  const closed = new AbortController();
  request.raw.once('close', () => closed.abort());
  const event =
    accepted.needsWake && !accepted.duplicate ? await waitForReply(deps.db, deps.listener, accepted.eventId, COMPLETION_WAIT_MS, closed.signal, true) : await getEvent(deps.db, accepted.eventId);
  const finished = event?.status === 'done' || event?.status === 'failed';
  if (!finished && !event?.waiting) return openAiError(reply, 504, 'timeout', `the turn is still running; follow it at GET /v1/events/${accepted.eventId}`);
  const content = finished ? (event.replyText ?? '') : waitingText(event!.waiting!);
  return reply.code(200).send({
    ...completionBase(accepted.eventId, body.model),
    object: 'chat.completion',
    choices: [{ index: 0, message: { role: 'assistant', content, refusal: null }, logprobs: null, finish_reason: 'stop' }],
    usage: await usageOf(deps, accepted.eventId),
  });
}

/**
 * The OpenAI-compatible endpoint (chat front ends such as Open WebUI or LibreChat): `model` names a
 * profile, the chat is keyed by X-Herald-Chat-Id or `user`, only the newest user message is new
 * input, and tools run inside Herald: the answer is an ordinary assistant message with usage.
 */
export function registerOpenAiCompatRoutes(app: FastifyInstance, deps: MessageRouteDependencies): void {
  const models = { summary: 'The profiles the caller may chat with, as OpenAI-compatible models', tags: ['openai'], response: { 200: modelList } };
  app.get('/v1/models', withContract(models), async (request) => {
    // A personal token's grants name the profiles it may chat with; the bootstrap token may use all.
    const principal = principalOfRequest(request);
    const usable = (await profileIds(deps.db)).filter((profileId) => mayAct(principal, 'chat', { profileId }));
    return { object: 'list', data: usable.map((id) => ({ id, object: 'model', created: 0, owned_by: 'herald' })) };
  });

  const completions = {
    summary: 'An OpenAI-compatible chat completion (model = profile; with stream: true, chat.completion.chunk events)',
    tags: ['openai'],
    body: chatCompletionBody,
    // Errors, any status: OpenAI's fields (message, type, param) beside Herald's code.
    response: { 200: z.union([chatCompletion, z.string()]) },
  };
  app.post('/v1/chat/completions', withContract(completions), async (request, reply) => {
    const input = await parse(deps, request, reply);
    if (!('text' in input)) return input;
    const accepted = await accept(deps, reply, input);
    if (!('eventId' in accepted)) return accepted;
    if (input.body.stream === true) return streamCompletion(deps, request, reply, accepted, input.body);
    return wholeCompletion(deps, request, reply, accepted, input.body);
  });
}
