import { createHash, randomBytes } from 'node:crypto';
import { createServer } from 'node:http';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo, Socket } from 'node:net';

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
}

export type FakeReply =
  | { text: string }
  | { toolCalls: { name: string; arguments: Record<string, unknown> }[]; text?: string }
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
}

export interface FakeLLM {
  /** The base URL to give the SDK. */
  url: string;
  requests: FakeRequest[];
  handler: FakeHandler;
  latencyMs: number;
  /** The most requests ever in flight at once, per session key. */
  maxConcurrentPerKey: Map<string, number>;
  inFlight: Map<string, number>;
  close(): Promise<void>;
}

export const echoHandler: FakeHandler = (request) => ({ text: `echo: ${request.lastUserText}` });

const tokens = (chars: number) => Math.ceil(chars / 4);

function readBody(request: IncomingMessage): Promise<string> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    request.on('error', reject);
  });
}

function textOf(content: unknown): string {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content)) return '';
  return content
    .map((block: { type?: string; text?: string; content?: unknown }) =>
      block.type === 'text' ? (block.text ?? '') : block.type === 'tool_result' ? textOf(block.content) : '',
    )
    .join('');
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
        ...(m.tool_calls
          ? { toolCalls: m.tool_calls.map((c: any) => ({ id: c.id, name: c.function.name, arguments: c.function.arguments })) }
          : {}),
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
        ...(calls.length > 0
          ? { toolCalls: calls.map((b) => ({ id: b.id, name: b.name, arguments: JSON.stringify(b.input) })) }
          : {}),
      });
      continue;
    }
    for (const block of blocks) {
      if (block.type === 'tool_result') messages.push({ role: 'tool', content: textOf(block.content), toolCallId: block.tool_use_id });
    }
    const text = blocks.filter((b) => b.type === 'text').map((b) => b.text).join('');
    if (text !== '') messages.push({ role: 'user', content: text });
  }
  return { system, messages };
}

/**
 * OpenAI's automatic prefix cache, approximately: the longest prefix (in 4-character tokens) this
 * request shares with an earlier request of the same cache key, counted in 128-token steps and
 * only from 1,024 tokens on.
 */
class OpenAIPrefixCache {
  readonly #seen = new Map<string, string[]>();
  account(key: string, serialized: string): number {
    const previous = this.#seen.get(key) ?? [];
    let best = 0;
    for (const earlier of previous) {
      const limit = Math.min(earlier.length, serialized.length);
      let i = 0;
      while (i < limit && earlier.charCodeAt(i) === serialized.charCodeAt(i)) i++;
      best = Math.max(best, i);
    }
    previous.push(serialized);
    if (previous.length > 64) previous.shift();
    this.#seen.set(key, previous);
    const cached = Math.floor(Math.floor(best / 4) / 128) * 128;
    return cached >= 1024 ? Math.min(cached, tokens(serialized.length)) : 0;
  }
}

/**
 * Anthropic's explicit cache, approximately: the prefix (tools, then system, then messages) up to
 * each cache_control breakpoint is cached once written. A request reads the longest breakpoint
 * prefix seen before and writes the rest up to its last breakpoint. Prefixes under 1,024 tokens are
 * not cached, as with the real API.
 */
class AnthropicPrefixCache {
  readonly #written = new Set<string>();
  account(body: any): { read: number; write: number; total: number } {
    const parts: { text: string; breakpoint: boolean }[] = [];
    for (const tool of body.tools ?? []) parts.push({ text: JSON.stringify({ ...tool, cache_control: undefined }), breakpoint: !!tool.cache_control });
    const system = typeof body.system === 'string' ? [{ type: 'text', text: body.system }] : (body.system ?? []);
    for (const block of system) parts.push({ text: JSON.stringify({ ...block, cache_control: undefined }), breakpoint: !!block.cache_control });
    for (const message of body.messages ?? []) {
      const blocks = typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : message.content;
      for (const block of blocks) {
        parts.push({ text: message.role + JSON.stringify({ ...block, cache_control: undefined }), breakpoint: !!block.cache_control });
      }
    }
    let prefix = '';
    let read = 0;
    let lastBreakpoint = 0;
    const hashes: string[] = [];
    for (const part of parts) {
      prefix += part.text;
      if (!part.breakpoint) continue;
      const length = tokens(prefix.length);
      if (length < 1024) continue;
      const hash = createHash('sha256').update(prefix).digest('hex');
      hashes.push(hash);
      if (this.#written.has(hash)) read = length;
      lastBreakpoint = length;
    }
    for (const hash of hashes) this.#written.add(hash);
    const total = tokens(prefix.length);
    return { read, write: Math.max(0, lastBreakpoint - read), total };
  }
}

function id(prefix: string): string {
  return `${prefix}${randomBytes(12).toString('hex')}`;
}

function sendJson(response: ServerResponse, status: number, body: unknown, headers: Record<string, string> = {}): void {
  const payload = JSON.stringify(body);
  response.writeHead(status, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(payload), ...headers });
  response.end(payload);
}

async function startFake(provider: 'openai' | 'anthropic', options: FakeLLMOptions): Promise<FakeLLM> {
  const openaiCache = new OpenAIPrefixCache();
  const anthropicCache = new AnthropicPrefixCache();
  const sessionKeyOf =
    options.sessionKeyOf ??
    ((request: FakeRequest) => (typeof request.body.prompt_cache_key === 'string' ? request.body.prompt_cache_key : undefined));
  const sockets = new Set<Socket>();
  const fake: FakeLLM = {
    url: '',
    requests: [],
    handler: options.handler ?? echoHandler,
    latencyMs: options.latencyMs ?? 0,
    maxConcurrentPerKey: new Map(),
    inFlight: new Map(),
    close: async () => {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };

  const server = createServer((request, response) => {
    void (async () => {
      const path = (request.url ?? '').split('?')[0] ?? '';
      const expected = provider === 'openai' ? /^(\/v1)?\/chat\/completions$/ : /^(\/v1)?\/messages$/;
      if (request.method !== 'POST' || !expected.test(path)) {
        sendJson(response, 404, { error: { message: `no route ${request.method} ${path}`, type: 'not_found' } });
        return;
      }
      const raw = await readBody(request);
      let body: any;
      try {
        body = JSON.parse(raw);
      } catch {
        sendJson(response, 400, { error: { message: 'invalid JSON body', type: 'invalid_request_error' } });
        return;
      }
      const neutral = provider === 'openai' ? neutralOpenAI(body) : neutralAnthropic(body);
      const users = neutral.messages.filter((m) => m.role === 'user');
      const fakeRequest: FakeRequest = {
        provider,
        body,
        headers: request.headers,
        receivedAt: Date.now(),
        system: neutral.system,
        messages: neutral.messages,
        lastUserText: users[users.length - 1]?.content ?? '',
        toolNames: (body.tools ?? []).map((t: any) => (provider === 'openai' ? t.function?.name : t.name)),
        sessionKey: undefined,
      };
      fakeRequest.sessionKey = sessionKeyOf(fakeRequest);
      fake.requests.push(fakeRequest);
      const key = fakeRequest.sessionKey;
      if (key !== undefined) {
        const now = (fake.inFlight.get(key) ?? 0) + 1;
        fake.inFlight.set(key, now);
        fake.maxConcurrentPerKey.set(key, Math.max(now, fake.maxConcurrentPerKey.get(key) ?? 0));
      }
      try {
        if (fake.latencyMs > 0) await new Promise((resolve) => setTimeout(resolve, fake.latencyMs));
        const reply = await fake.handler(fakeRequest);
        if ('hang' in reply) {
          await new Promise<void>((resolve) => request.socket.once('close', () => resolve()));
          return;
        }
        if ('error' in reply) {
          const status = reply.error.status;
          const errorBody =
            reply.error.body ??
            (provider === 'openai'
              ? { error: { message: `fake error ${status}`, type: status === 429 ? 'rate_limit_exceeded' : 'server_error', code: null } }
              : { type: 'error', error: { type: status === 429 ? 'rate_limit_error' : status === 529 ? 'overloaded_error' : 'api_error', message: `fake error ${status}` } });
          sendJson(response, status, errorBody, reply.error.headers);
          return;
        }
        if ('malformed' in reply) {
          sendJson(response, 200, provider === 'openai' ? { id: id('chatcmpl-'), object: 'chat.completion', choices: [] } : { id: id('msg_'), type: 'message' });
          return;
        }
        const text = reply.text ?? '';
        const calls = 'toolCalls' in reply ? reply.toolCalls : [];
        const outputTokens = tokens(text.length + JSON.stringify(calls).length);
        if (provider === 'openai') {
          const serialized = JSON.stringify(body.tools ?? []) + (body.messages ?? []).map((m: unknown) => JSON.stringify(m)).join('');
          const cached = openaiCache.account(key ?? '', serialized);
          const promptTokens = tokens(serialized.length);
          sendJson(response, 200, {
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
                  ...(calls.length > 0
                    ? { tool_calls: calls.map((c) => ({ id: id('call_'), type: 'function', function: { name: c.name, arguments: JSON.stringify(c.arguments) } })) }
                    : {}),
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
          });
          return;
        }
        const cache = anthropicCache.account(body);
        sendJson(response, 200, {
          id: id('msg_'),
          type: 'message',
          role: 'assistant',
          model: body.model,
          content: [
            ...(text === '' ? [] : [{ type: 'text', text }]),
            ...calls.map((c) => ({ type: 'tool_use', id: id('toolu_'), name: c.name, input: c.arguments })),
          ],
          stop_reason: calls.length > 0 ? 'tool_use' : 'end_turn',
          stop_sequence: null,
          usage: {
            input_tokens: Math.max(0, cache.total - cache.read - cache.write),
            output_tokens: outputTokens,
            cache_read_input_tokens: cache.read,
            cache_creation_input_tokens: cache.write,
          },
        });
      } finally {
        if (key !== undefined) fake.inFlight.set(key, (fake.inFlight.get(key) ?? 1) - 1);
      }
    })().catch((error: unknown) => {
      if (!response.headersSent) sendJson(response, 500, { error: { message: String(error), type: 'server_error' } });
    });
  });
  server.on('connection', (socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', () => resolve()));
  const { port } = server.address() as AddressInfo;
  fake.url = provider === 'openai' ? `http://127.0.0.1:${port}/v1` : `http://127.0.0.1:${port}`;
  return fake;
}

export function startFakeOpenAI(options: FakeLLMOptions = {}): Promise<FakeLLM> {
  return startFake('openai', options);
}

export function startFakeAnthropic(options: FakeLLMOptions = {}): Promise<FakeLLM> {
  return startFake('anthropic', options);
}
