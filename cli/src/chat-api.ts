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

  async event(eventId: string): Promise<EventBody> {
    return (await this.#call(`/v1/events/${eventId}`)).body as EventBody;
  }

  /** The transcript after `seq` (or the newest message when seq is undefined). */
  async messagesAfter(sessionId: string, seq: number | undefined): Promise<TranscriptMessage[]> {
    const query = seq === undefined ? 'limit=1' : `after=${seq}&limit=100`;
    const { status, body } = await this.#call(`/v1/sessions/${sessionId}/messages?${query}`);
    return status === 200 ? ((body as { messages: TranscriptMessage[] }).messages ?? []) : [];
  }
}
