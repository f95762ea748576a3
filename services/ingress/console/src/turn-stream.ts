// A running turn as the API streams it (POST /v1/messages with Accept: text/event-stream, or GET
// /v1/events/:id/stream): server-sent events read from fetch, since EventSource cannot send the
// token in a header. A broken connection resumes with Last-Event-ID, so nothing shows twice.
import { ApiError, openStream, segment } from './api.ts';
import type { StreamEventData, StreamEventName } from '../../src/contracts/message-views.ts';

export type TurnEvent = { [K in StreamEventName]: { event: K; data: StreamEventData[K] } }[StreamEventName];

export interface TurnHandlers {
  /** The ids, as soon as the stream opened (before any event). */
  opened?(ids: { eventId: string; sessionId: string }): void;
  event(event: TurnEvent): void;
}

const EVENT_NAMES: readonly string[] = ['delta', 'tool', 'compression', 'waiting', 'done', 'error'] satisfies StreamEventName[];
const RECONNECTS = 3;

interface RawEvent {
  id: string | undefined;
  event: string;
  data: string;
}

/** One block between blank lines, parsed as EventSource does (comments skipped); undefined without data. */
function parseBlock(block: string): RawEvent | undefined {
  const data: string[] = [];
  let event = 'message';
  let id: string | undefined;
  for (const line of block.split('\n')) {
    if (line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const name = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (name === 'data') data.push(value);
    else if (name === 'event') event = value;
    else if (name === 'id') id = value;
  }
  return data.length === 0 ? undefined : { id, event, data: data.join('\n') };
}

async function* readEvents(response: Response): AsyncGenerator<RawEvent> {
  if (!response.body) return;
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = '';
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += value.replace(/\r\n?/g, '\n');
      for (let end = buffer.indexOf('\n\n'); end !== -1; end = buffer.indexOf('\n\n')) {
        const parsed = parseBlock(buffer.slice(0, end));
        buffer = buffer.slice(end + 2);
        if (parsed) yield parsed;
      }
    }
  } finally {
    reader.releaseLock();
  }
}

function turnEvent(raw: RawEvent): TurnEvent | undefined {
  if (!EVENT_NAMES.includes(raw.event)) return undefined;
  try {
    return { event: raw.event, data: JSON.parse(raw.data) } as TurnEvent;
  } catch {
    return undefined;
  }
}

/** Reads one response's events; true when the turn ended (done or error), false when the connection broke first. */
async function relay(response: Response, handlers: TurnHandlers, resume: { lastId: string | undefined }, signal: AbortSignal): Promise<boolean> {
  try {
    for await (const raw of readEvents(response)) {
      if (signal.aborted) return true;
      if (raw.id !== undefined) resume.lastId = raw.id;
      const event = turnEvent(raw);
      if (!event) continue;
      handlers.event(event);
      if (event.event === 'done' || event.event === 'error') return true;
    }
  } catch {
    // A reset connection: resumed below.
  }
  return signal.aborted;
}

/**
 * Follows a turn to its end: `start` opens the first stream (a new message, or a follow of an
 * accepted event); a connection that breaks before done is followed again from the last event id.
 */
export async function followTurn(start: () => Promise<Response>, handlers: TurnHandlers, signal: AbortSignal): Promise<void> {
  let response = await start();
  const eventId = response.headers.get('x-herald-event-id') ?? '';
  handlers.opened?.({ eventId, sessionId: response.headers.get('x-herald-session-id') ?? '' });
  const resume: { lastId: string | undefined } = { lastId: undefined };
  for (let attempt = 0; ; attempt++) {
    if (await relay(response, handlers, resume, signal)) return;
    if (attempt >= RECONNECTS || eventId === '') break;
    await new Promise((resolve) => setTimeout(resolve, 500 * (attempt + 1)));
    try {
      response = await openStream('GET', `/v1/events/${segment(eventId)}/stream`, { lastEventId: resume.lastId, signal });
    } catch (error) {
      if (error instanceof ApiError && error.status < 500) break;
    }
  }
  if (signal.aborted) return;
  handlers.event({ event: 'error', data: { code: 'unavailable', message: 'The connection to Herald broke; the turn goes on, and its answer shows in the session.' } });
}

/** Follows an accepted event by id (a turn already running, seen from another page). */
export function followEvent(eventId: string, handlers: TurnHandlers, signal: AbortSignal): Promise<void> {
  return followTurn(() => openStream('GET', `/v1/events/${segment(eventId)}/stream`, { signal }), handlers, signal);
}
