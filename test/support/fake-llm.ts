import { randomBytes } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { sendJson, startFakeHttp } from './fake-http.ts';
import type { FakeHttpRequest } from './fake-http.ts';
import { waitFor } from './wait.ts';
import { AnthropicPrefixCache, bytes, OpenAIPrefixCache, tokens } from './prompt-cache.ts';

/**
 * Local stand-ins for the OpenAI and Anthropic HTTP APIs. They speak the real wire formats so the
 * official SDKs can be pointed at them by base URL; a test scripts the answers through `handler`.
 */

export interface NeutralMessage {
  role: 'user' | 'assistant' | 'tool';
  content: string;
  toolCallId?: string;
  toolCalls?: { id: string; name: string; arguments: string }[];
}

export interface FakeRequest {
  provider: 'openai' | 'anthropic';
  body: Record<string, unknown>;
  headers: IncomingMessage['headers'];
  receivedAt: number;
  system: string;
  messages: NeutralMessage[];
  lastUserText: string;
  toolNames: string[];
  sessionKey: string | undefined;
  /** The prompt's size in the fake's tokens (4 bytes of serialized JSON each): what usage reports. */
  promptTokens: number;
  /** True when the prompt was larger than `contextTokens` and refused like the provider refuses it. */
  refused?: boolean;
  /** Milliseconds from the request's arrival to its answer being written: the model's share. */
  serviceMs?: number;
  /** The request asked for a streamed answer. */
  stream?: boolean;
  /** Streamed answers: when each text piece was written (performance.now()), with its text. */
  chunksSent?: { at: number; text: string }[];
}

/** Herald's summariser calls carry its own system prompt (services/worker/src/compaction.ts). */
export function isSummaryRequest(request: FakeRequest): boolean {
  return request.system.startsWith('You write compact, faithful summaries');
}

interface ToolCallReply {
  name: string;
  arguments: Record<string, unknown>;
}

/**
 * A streamed answer (the request asked `stream: true`) is cut into `chunks` pieces of text, written
 * `chunkDelayMs` apart; `breakAfter` drops the connection after that many pieces, mid-stream.
 */
export interface StreamShape {
  chunkDelayMs?: number;
  breakAfter?: number;
  /**
   * The usage to report instead of the fake's own count: input includes the cached tokens, as
   * OpenAI's prompt_tokens does (Anthropic gets input_tokens = input - cached, and
   * cache_read_input_tokens = cached, as its API splits them).
   */
  usage?: { inputTokens: number; cachedInputTokens?: number; outputTokens: number };
}

export type FakeReply =
  | ({ text: string } & StreamShape)
  | ({ toolCalls: ToolCallReply[]; text?: string } & StreamShape)
  | { error: { status: number; body?: unknown; headers?: Record<string, string> } }
  | { malformed: true }
  | { hang: true };

export type FakeHandler = (request: FakeRequest) => FakeReply | Promise<FakeReply>;

export interface FakeLLMOptions {
  handler?: FakeHandler;
  /** Delay before every answer, like a model's latency. */
  latencyMs?: number;
  /** Groups requests to count how many are in flight at once per group (default: the session). */
  sessionKeyOf?: (request: FakeRequest) => string | undefined;
  /** The model's context window: a larger prompt gets the provider's own 400 (see `overflowError`). */
  contextTokens?: number;
  /** Streamed answers: milliseconds between pieces of text (default 0). */
  chunkDelayMs?: number;
  /** How many requests `requests` keeps, the newest (default: all). A soak's driver sends thousands of long transcripts. */
  retainRequests?: number;
  /** The address to listen on (127.0.0.1; a fault test's network namespace reaches it on its veth address). */
  host?: string;
}

export interface FakeLLM {
  provider: 'openai' | 'anthropic';
  /** The base URL to give the SDK. */
  url: string;
  requests: FakeRequest[];
  retainRequests: number;
  handler: FakeHandler;
  latencyMs: number;
  /** The context window in force; undefined: unlimited. */
  contextTokens: number | undefined;
  /** The most requests ever in flight at once, per session key. */
  maxConcurrentPerKey: Map<string, number>;
  inFlight: Map<string, number>;
  /** Queues replies for the next requests, in order; `handler` answers once the queue is empty. */
  script(...replies: FakeReply[]): void;
  /** The requests of one session key (by default the session id), oldest first. */
  requestsFor(sessionKey: string): FakeRequest[];
  /** Resolves with the session's requests once at least `count` have arrived. */
  waitForCalls(sessionKey: string, count?: number): Promise<FakeRequest[]>;
  /** Calls of /v1/audio/transcriptions (OpenAI's multipart form), answered with `transcript`. */
  transcriptions: { model: string; fileName: string; bytes: Buffer }[];
  transcript: string;
  close(): Promise<void>;
}

export const echoHandler: FakeHandler = (request) => ({ text: `echo: ${request.lastUserText}` });

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content.map((block: { type?: string; text?: string; content?: unknown }) => (block.type === 'text' ? (block.text ?? '') : block.type === 'tool_result' ? textOf(block.content) : '')).join('');
}

function neutralOpenAI(body: any): { system: string; messages: NeutralMessage[] } {
  const messages: NeutralMessage[] = [];
  let system = '';
  for (const m of body.messages ?? []) {
    if (m.role === 'system' || m.role === 'developer') system += textOf(m.content);
    else if (m.role === 'tool') messages.push({ role: 'tool', content: textOf(m.content), toolCallId: m.tool_call_id });
    else if (m.role === 'assistant') {
      messages.push({
        role: 'assistant',
        content: textOf(m.content ?? ''),
        ...(m.tool_calls ? { toolCalls: m.tool_calls.map((c: any) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments })) } : {}),
      });
    } else messages.push({ role: 'user', content: textOf(m.content) });
  }
  return { system, messages };
}

function neutralAnthropic(body: any): { system: string; messages: NeutralMessage[] } {
  const system = typeof body.system === 'string' ? body.system : textOf(body.system);
  const messages: NeutralMessage[] = [];
  for (const m of body.messages ?? []) {
    const blocks: any[] = typeof m.content === 'string' ? [{ type: 'text', text: m.content }] : m.content;
    if (m.role === 'assistant') {
      const calls = blocks.filter((b) => b.type === 'tool_use');
      messages.push({
        role: 'assistant',
        content: textOf(blocks),
        ...(calls.length > 0 ? { toolCalls: calls.map((b) => ({ id: b.id, name: b.name, arguments: JSON.stringify(b.input) })) } : {}),
      });
      continue;
    }
    for (const block of blocks) {
      if (block.type === 'tool_result') messages.push({ role: 'tool', content: textOf(block.content), toolCallId: block.tool_use_id });
    }
    const text = blocks
      .filter((b) => b.type === 'text')
      .map((b) => b.text)
      .join('');
    if (text !== '') messages.push({ role: 'user', content: text });
  }
  return { system, messages };
}

function id(prefix: string): string {
  return `${prefix}${randomBytes(12).toString('hex')}`;
}

type Provider = 'openai' | 'anthropic';

function errorBody(provider: Provider, status: number): unknown {
  if (provider === 'openai') {
    return { error: { message: `fake error ${status}`, type: status === 429 ? 'rate_limit_exceeded' : 'server_error', code: null } };
  }
  const type = status === 429 ? 'rate_limit_error' : status === 529 ? 'overloaded_error' : 'api_error';
  return { type: 'error', error: { type, message: `fake error ${status}` } };
}

function openaiSerialized(body: any): string {
  return `model:${String(body.model)}\n` + JSON.stringify(body.tools ?? []) + (body.messages ?? []).map((m: unknown) => JSON.stringify(m)).join('');
}

/** The prompt's size as the fake counts it: the serialized tools, system and messages. */
function promptTokensOf(provider: Provider, body: any): number {
  if (provider === 'openai') return tokens(bytes(openaiSerialized(body)));
  return tokens(bytes(JSON.stringify(body.tools ?? []) + JSON.stringify(body.system ?? '') + JSON.stringify(body.messages ?? [])));
}

/** What each provider answers to a prompt over the window: OpenAI's code, Anthropic's wording. */
export function overflowError(provider: Provider, promptTokens: number, window: number): { status: number; body: unknown } {
  if (provider === 'openai') {
    const message = `This model's maximum context length is ${window} tokens. However, your messages resulted in ${promptTokens} tokens. ` + 'Please reduce the length of the messages.';
    return { status: 400, body: { error: { message, type: 'invalid_request_error', param: 'messages', code: 'context_length_exceeded' } } };
  }
  return {
    status: 400,
    body: { type: 'error', error: { type: 'invalid_request_error', message: `prompt is too long: ${promptTokens} tokens > ${window} maximum` } },
  };
}

function openaiAnswer(body: any, text: string, calls: ToolCallReply[], outputTokens: number, cache: OpenAIPrefixCache): unknown {
  const serialized = openaiSerialized(body);
  const cached = cache.account(typeof body.prompt_cache_key === 'string' ? body.prompt_cache_key : '', serialized);
  const promptTokens = tokens(bytes(serialized));
  return {
    id: id('chatcmpl-'),
    object: 'chat.completion',
    created: Math.floor(Date.now() / 1000),
    model: body.model,
    choices: [
      {
        index: 0,
        message: {
          role: 'assistant',
          content: calls.length > 0 && text === '' ? null : text,
          ...(calls.length > 0 ? { tool_calls: calls.map((c) => ({ id: id('call_'), type: 'function', function: { name: c.name, arguments: JSON.stringify(c.arguments) } })) } : {}),
          refusal: null,
        },
        logprobs: null,
        finish_reason: calls.length > 0 ? 'tool_calls' : 'stop',
      },
    ],
    usage: {
      prompt_tokens: promptTokens,
      completion_tokens: outputTokens,
      total_tokens: promptTokens + outputTokens,
      prompt_tokens_details: { cached_tokens: cached },
    },
  };
}

function anthropicAnswer(body: any, text: string, calls: ToolCallReply[], outputTokens: number, cache: AnthropicPrefixCache): unknown {
  const usage = cache.account(body);
  // The total reported is the request's real size, the one the window is checked against.
  const total = Math.max(promptTokensOf('anthropic', body), usage.read + usage.write);
  return {
    id: id('msg_'),
    type: 'message',
    role: 'assistant',
    model: body.model,
    content: [...(text === '' ? [] : [{ type: 'text', text }]), ...calls.map((c) => ({ type: 'tool_use', id: id('toolu_'), name: c.name, input: c.arguments }))],
    stop_reason: calls.length > 0 ? 'tool_use' : 'end_turn',
    stop_sequence: null,
    usage: {
      input_tokens: total - usage.read - usage.write,
      output_tokens: outputTokens,
      cache_read_input_tokens: usage.read,
      cache_creation_input_tokens: usage.write,
    },
  };
}

/** A scripted usage in the provider's own wire shape. */
function scriptedUsage(provider: Provider, usage: NonNullable<StreamShape['usage']>): unknown {
  const cached = usage.cachedInputTokens ?? 0;
  if (provider === 'openai') {
    return {
      prompt_tokens: usage.inputTokens,
      completion_tokens: usage.outputTokens,
      total_tokens: usage.inputTokens + usage.outputTokens,
      prompt_tokens_details: { cached_tokens: cached },
    };
  }
  return { input_tokens: usage.inputTokens - cached, output_tokens: usage.outputTokens, cache_read_input_tokens: cached, cache_creation_input_tokens: 0 };
}

/** One server-sent event of a streamed answer; `text` marks a piece of the answer's text. */
interface StreamEvent {
  event?: string;
  data: unknown;
  text?: string;
}

/** Cuts text into pieces of about `size` characters (never inside a surrogate pair). */
function pieces(text: string, size = 6): string[] {
  const chars = Array.from(text);
  const out: string[] = [];
  for (let i = 0; i < chars.length; i += size) out.push(chars.slice(i, i + size).join(''));
  return out;
}

/** OpenAI's chat.completion.chunk stream of the same answer, usage in a last chunk when asked. */
function openaiStreamEvents(body: any, answer: any): StreamEvent[] {
  const choice = answer.choices[0];
  const base = { id: answer.id, object: 'chat.completion.chunk', created: answer.created, model: answer.model };
  const chunk = (delta: unknown, finish: string | null = null) => ({ ...base, choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }] });
  const events: StreamEvent[] = [{ data: chunk({ role: 'assistant', content: '' }) }];
  for (const text of pieces(choice.message.content ?? '')) events.push({ data: chunk({ content: text }), text });
  (choice.message.tool_calls ?? []).forEach((call: any, index: number) => {
    events.push({ data: chunk({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.function.name, arguments: '' } }] }) });
    for (const part of pieces(call.function.arguments, 12)) {
      events.push({ data: chunk({ tool_calls: [{ index, function: { arguments: part } }] }) });
    }
  });
  events.push({ data: chunk({}, choice.finish_reason) });
  if (body.stream_options?.include_usage === true) events.push({ data: { ...base, choices: [], usage: answer.usage } });
  events.push({ data: '[DONE]' });
  return events;
}

/** Anthropic's Messages stream of the same answer: message_start, blocks, message_delta, message_stop. */
function anthropicStreamEvents(answer: any): StreamEvent[] {
  const { content, usage, stop_reason: stopReason, ...message } = answer;
  const events: StreamEvent[] = [{ event: 'message_start', data: { type: 'message_start', message: { ...message, content: [], stop_reason: null, usage: { ...usage, output_tokens: 1 } } } }];
  content.forEach((block: any, index: number) => {
    if (block.type === 'text') {
      events.push({ event: 'content_block_start', data: { type: 'content_block_start', index, content_block: { type: 'text', text: '' } } });
      for (const text of pieces(block.text)) {
        events.push({ event: 'content_block_delta', data: { type: 'content_block_delta', index, delta: { type: 'text_delta', text } }, text });
      }
    } else {
      events.push({ event: 'content_block_start', data: { type: 'content_block_start', index, content_block: { type: 'tool_use', id: block.id, name: block.name, input: {} } } });
      for (const part of pieces(JSON.stringify(block.input), 12)) {
        events.push({ event: 'content_block_delta', data: { type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: part } } });
      }
    }
    events.push({ event: 'content_block_stop', data: { type: 'content_block_stop', index } });
  });
  events.push({ event: 'message_delta', data: { type: 'message_delta', delta: { stop_reason: stopReason, stop_sequence: null }, usage: { output_tokens: usage.output_tokens } } });
  events.push({ event: 'message_stop', data: { type: 'message_stop' } });
  return events;
}

/** Writes a stream's events; `breakAfter` text pieces in, the connection is destroyed mid-answer. */
async function writeStream(
  response: ServerResponse,
  events: StreamEvent[],
  shape: { chunkDelayMs: number; breakAfter: number | undefined },
  sent: { at: number; text: string }[],
  isGone: () => boolean,
): Promise<void> {
  response.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
  for (const event of events) {
    if (isGone()) return;
    if (event.text !== undefined) {
      if (shape.breakAfter !== undefined && sent.length >= shape.breakAfter) {
        response.destroy();
        return;
      }
      if (sent.length > 0 && shape.chunkDelayMs > 0) await new Promise((resolve) => setTimeout(resolve, shape.chunkDelayMs));
      sent.push({ at: performance.now(), text: event.text });
    }
    const data = typeof event.data === 'string' ? event.data : JSON.stringify(event.data);
    response.write(`${event.event ? `event: ${event.event}\n` : ''}data: ${data}\n\n`);
  }
  response.end();
}

function neutralRequest(provider: Provider, body: any, headers: IncomingMessage['headers']): FakeRequest {
  const neutral = provider === 'openai' ? neutralOpenAI(body) : neutralAnthropic(body);
  const users = neutral.messages.filter((m) => m.role === 'user');
  return {
    provider,
    body,
    headers,
    receivedAt: Date.now(),
    system: neutral.system,
    messages: neutral.messages,
    lastUserText: users[users.length - 1]?.content ?? '',
    toolNames: (body.tools ?? []).map((t: any) => (provider === 'openai' ? t.function?.name : t.name)),
    sessionKey: undefined,
    promptTokens: promptTokensOf(provider, body),
  };
}

/** Counts a request in flight for its key until `release` is called (at most once). */
function trackInFlight(fake: FakeLLM, key: string | undefined): () => void {
  if (key === undefined) return () => undefined;
  const now = (fake.inFlight.get(key) ?? 0) + 1;
  fake.inFlight.set(key, now);
  fake.maxConcurrentPerKey.set(key, Math.max(now, fake.maxConcurrentPerKey.get(key) ?? 0));
  let released = false;
  return () => {
    if (released) return;
    released = true;
    fake.inFlight.set(key, (fake.inFlight.get(key) ?? 1) - 1);
  };
}

async function startFake(provider: Provider, options: FakeLLMOptions): Promise<FakeLLM> {
  const transcribe = async (request: FakeHttpRequest, response: ServerResponse) => {
    const form = await new Response(new Uint8Array(request.bytes), { headers: { 'content-type': String(request.headers['content-type']) } }).formData();
    const file = form.get('file');
    if (!(file instanceof Blob)) return sendJson(response, 400, { error: { message: 'file is required', type: 'invalid_request_error' } });
    fake.transcriptions.push({ model: String(form.get('model')), fileName: (file as File).name, bytes: Buffer.from(await file.arrayBuffer()) });
    return sendJson(response, 200, { text: fake.transcript });
  };
  const openaiCache = new OpenAIPrefixCache();
  const anthropicCache = new AnthropicPrefixCache();
  const sessionKeyOf = options.sessionKeyOf ?? ((request: FakeRequest) => (typeof request.body.prompt_cache_key === 'string' ? request.body.prompt_cache_key : undefined));
  const scripted: FakeReply[] = [];
  const expected = provider === 'openai' ? /^(\/v1)?\/chat\/completions$/ : /^(\/v1)?\/messages$/;

  const answer = async (request: FakeHttpRequest, response: ServerResponse, gone: Promise<void>, isGone: () => boolean) => {
    if (provider === 'openai' && request.method === 'POST' && /^(\/v1)?\/audio\/transcriptions$/.test(request.path)) return transcribe(request, response);
    if (request.method !== 'POST' || !expected.test(request.path)) {
      sendJson(response, 404, { error: { message: `no route ${request.method} ${request.path}`, type: 'not_found' } });
      return;
    }
    if (typeof request.body !== 'object' || request.body === null) {
      sendJson(response, 400, { error: { message: 'invalid JSON body', type: 'invalid_request_error' } });
      return;
    }
    const arrived = performance.now();
    const body = request.body;
    const fakeRequest = neutralRequest(provider, body, request.headers);
    fakeRequest.sessionKey = sessionKeyOf(fakeRequest);
    fake.requests.push(fakeRequest);
    if (fake.requests.length > fake.retainRequests) fake.requests.splice(0, fake.requests.length - fake.retainRequests);
    // In flight until the answer is written or the client has hung up, whichever comes first: an
    // aborted call must not count against the next one while a slow handler is still running.
    const release = trackInFlight(fake, fakeRequest.sessionKey);
    void gone.then(release);
    try {
      if (fake.latencyMs > 0) {
        let timer: NodeJS.Timeout | undefined;
        await Promise.race([new Promise((resolve) => (timer = setTimeout(resolve, fake.latencyMs))), gone]);
        clearTimeout(timer);
      }
      if (isGone()) return;
      if (fake.contextTokens !== undefined && fakeRequest.promptTokens > fake.contextTokens) {
        fakeRequest.refused = true;
        const refusal = overflowError(provider, fakeRequest.promptTokens, fake.contextTokens);
        return sendJson(response, refusal.status, refusal.body);
      }
      const reply = scripted.shift() ?? (await fake.handler(fakeRequest));
      if ('hang' in reply) return await gone;
      if ('error' in reply) return sendJson(response, reply.error.status, reply.error.body ?? errorBody(provider, reply.error.status), reply.error.headers);
      if ('malformed' in reply) {
        return sendJson(response, 200, provider === 'openai' ? { id: id('chatcmpl-'), object: 'chat.completion', choices: [] } : { id: id('msg_'), type: 'message' });
      }
      const text = reply.text ?? '';
      const calls = 'toolCalls' in reply ? reply.toolCalls : [];
      const outputTokens = tokens(bytes(text) + (calls.length > 0 ? bytes(JSON.stringify(calls)) : 0));
      const answer = provider === 'openai' ? openaiAnswer(body, text, calls, outputTokens, openaiCache) : anthropicAnswer(body, text, calls, outputTokens, anthropicCache);
      if (reply.usage) (answer as { usage: unknown }).usage = scriptedUsage(provider, reply.usage);
      if (body.stream === true) {
        fakeRequest.stream = true;
        fakeRequest.chunksSent = [];
        const shape = { chunkDelayMs: reply.chunkDelayMs ?? options.chunkDelayMs ?? 0, breakAfter: reply.breakAfter };
        const events = provider === 'openai' ? openaiStreamEvents(body, answer) : anthropicStreamEvents(answer);
        await writeStream(response, events, shape, fakeRequest.chunksSent, isGone);
        return;
      }
      sendJson(response, 200, answer);
    } finally {
      fakeRequest.serviceMs = performance.now() - arrived;
      release();
    }
  };

  const http = await startFakeHttp(
    async (request, response) => {
      // 'close' fires once the answer is written or the client went away (abort, timeout).
      let closed = response.destroyed;
      const gone = closed ? Promise.resolve() : new Promise<void>((resolve) => response.once('close', () => resolve()));
      void gone.then(() => (closed = true));
      try {
        await answer(request, response, gone, () => closed);
      } catch (error) {
        if (!response.headersSent) sendJson(response, 500, { error: { message: String(error), type: 'server_error' } });
      }
    },
    { retainRequests: 0, ...(options.host === undefined ? {} : { host: options.host }) },
  );
  const fake: FakeLLM = {
    provider,
    url: provider === 'openai' ? `${http.origin}/v1` : http.origin,
    requests: [],
    retainRequests: options.retainRequests ?? Number.POSITIVE_INFINITY,
    handler: options.handler ?? echoHandler,
    latencyMs: options.latencyMs ?? 0,
    contextTokens: options.contextTokens,
    maxConcurrentPerKey: new Map(),
    inFlight: new Map(),
    transcriptions: [],
    transcript: 'please restart the api pods',
    script: (...replies) => {
      scripted.push(...replies);
    },
    requestsFor: (sessionKey) => fake.requests.filter((request) => request.sessionKey === sessionKey),
    waitForCalls: (sessionKey, count = 1) =>
      waitFor(async () => (fake.requestsFor(sessionKey).length >= count ? fake.requestsFor(sessionKey) : undefined), {
        what: `${count} model call(s) for ${sessionKey}`,
      }),
    close: () => http.close(),
  };
  return fake;
}

export function startFakeOpenAI(options: FakeLLMOptions = {}): Promise<FakeLLM> {
  return startFake('openai', options);
}

export function startFakeAnthropic(options: FakeLLMOptions = {}): Promise<FakeLLM> {
  return startFake('anthropic', options);
}
