/** One server-sent event as a client sees it. */
export interface SseEvent {
  id?: string;
  event?: string;
  data: string;
  /** performance.now() when the event was parsed. */
  at: number;
}

/** Reads a text/event-stream body event by event (comments skipped), as EventSource parses it. */
export async function* readSse(response: Response): AsyncGenerator<SseEvent> {
  if (!response.body) return;
  const decoder = new TextDecoder();
  let buffer = '';
  for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
    buffer += decoder.decode(chunk, { stream: true });
    for (let end = buffer.indexOf('\n\n'); end !== -1; end = buffer.indexOf('\n\n')) {
      const block = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const event: SseEvent = { data: '', at: performance.now() };
      const data: string[] = [];
      for (const line of block.split('\n')) {
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon === -1 ? line : line.slice(0, colon);
        const value = colon === -1 ? '' : line.slice(colon + 1).replace(/^ /, '');
        if (field === 'data') data.push(value);
        else if (field === 'event') event.event = value;
        else if (field === 'id') event.id = value;
      }
      if (data.length === 0) continue;
      event.data = data.join('\n');
      yield event;
    }
  }
}

/** Every event of a stream until it ends (or `until` says stop), parsed as JSON where it is. */
export async function collectSse(response: Response, until: (event: SseEvent) => boolean = () => false): Promise<SseEvent[]> {
  const events: SseEvent[] = [];
  for await (const event of readSse(response)) {
    events.push(event);
    if (until(event)) break;
  }
  return events;
}

/**
 * Reads events into `into` until one satisfies `until` (or the stream ends), leaving the stream
 * open for more: unlike `break` in a for-await loop, which closes the generator.
 */
export async function readUntil(reader: AsyncGenerator<SseEvent>, into: SseEvent[], until: (event: SseEvent) => boolean): Promise<SseEvent | undefined> {
  for (;;) {
    const next = await reader.next();
    if (next.done) return undefined;
    into.push(next.value);
    if (until(next.value)) return next.value;
  }
}
