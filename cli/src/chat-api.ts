import type { Config } from '@herald/core';

/** A parked turn as the API shows it (GET /v1/events/:id `waiting`). */
export interface Waiting {
  id?: string;
  kind: 'approval' | 'clarify';
  tool: string;
  prompt: string;
  choices: string[] | null;
}

/** POST /v1/messages or GET /v1/events/:id, as the chat reads them. */
export interface EventBody {
  event_id?: string;
  session_id?: string;
  status?: string;
  reply?: { text: string } | null;
  waiting?: Waiting;
  error?: { message: string };
}

export interface TranscriptMessage {
  seq: number;
  role: string;
  content: string | null;
  name?: string;
  tool_calls?: { name?: string; function?: { name: string; arguments: string }; arguments?: unknown }[];
}

/** One server-sent event of GET /v1/events/:id/stream (delta, tool, waiting, done, error). */
export interface StreamItem {
  event: string;
  data: Record<string, unknown>;
}

/** Server-sent events from a response body, one parsed event at a time. */
async function* sseItems(body: ReadableStream<Uint8Array>): AsyncGenerator<StreamItem> {
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    for (let end = buffer.indexOf('\n\n'); end >= 0; end = buffer.indexOf('\n\n')) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      let event = 'message';
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith('event:')) event = line.slice(6).trim();
        else if (line.startsWith('data:')) data.push(line.slice(5).replace(/^ /, ''));
      }
      if (data.length === 0) continue;
      try {
        yield { event, data: JSON.parse(data.join('\n')) as Record<string, unknown> };
      } catch {
        // A comment or keep-alive that is not JSON: nothing to show.
      }
    }
  }
}

/** The HTTP API as `herald chat` uses it: the same routes any client has (docs/api.md). */
export class ChatApi {
  readonly #config: Config;

  constructor(config: Config) {
    this.#config = config;
  }

  get url(): string {
    return this.#config.api.url;
  }

  async #call(path: string, body?: unknown): Promise<{ status: number; body: unknown }> {
    const token = this.#config.api.token;
    const response = await fetch(`${this.#config.api.url}${path}`, {
      method: body === undefined ? 'GET' : 'POST',
      headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...(token === undefined ? {} : { authorization: `Bearer ${token}` }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, body: await response.json() };
  }

  /** Sends a line; chat commands answer at once, a message answers later (poll its event). */
  async send(chatId: string, userId: string, text: string): Promise<{ httpStatus: number; body: EventBody }> {
    const { status, body } = await this.#call('/v1/messages', { chat_id: chatId, user_id: userId, user_name: userId, text });
    return { httpStatus: status, body: body as EventBody };
  }

  /** Follows a turn as it runs: its text, tool calls, waits and end (GET /v1/events/:id/stream). */
  async *follow(eventId: string, signal: AbortSignal): AsyncGenerator<StreamItem> {
    const token = this.#config.api.token;
    const response = await fetch(`${this.#config.api.url}/v1/events/${eventId}/stream`, {
      headers: { accept: 'text/event-stream', ...(token === undefined ? {} : { authorization: `Bearer ${token}` }) },
      signal,
    });
    if (response.status !== 200 || response.body === null) throw new Error(`the event stream answered ${response.status}`);
    yield* sseItems(response.body);
  }

  async event(eventId: string): Promise<EventBody> {
    return (await this.#call(`/v1/events/${eventId}`)).body as EventBody;
  }

  /** The session this chat's next message lands in (the API's chat `chatId`, still routed to), if any. */
  async liveSession(chatId: string): Promise<string | undefined> {
    const query = new URLSearchParams({ platform: 'api', chat_id: chatId, state: 'live', limit: '1' });
    const { status, body } = await this.#call(`/v1/sessions?${query}`);
    return status === 200 ? (body as { sessions: { session_id: string }[] }).sessions[0]?.session_id : undefined;
  }

  /** The transcript after `seq` (or the newest message when seq is undefined). */
  async messagesAfter(sessionId: string, seq: number | undefined): Promise<TranscriptMessage[]> {
    const query = seq === undefined ? 'limit=1' : `after=${seq}&limit=100`;
    const { status, body } = await this.#call(`/v1/sessions/${sessionId}/messages?${query}`);
    return status === 200 ? ((body as { messages: TranscriptMessage[] }).messages ?? []) : [];
  }
}
