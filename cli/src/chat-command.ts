import { createInterface, clearLine, cursorTo } from 'node:readline';
import type { Interface } from 'node:readline';
import { userInfo } from 'node:os';
import type { Config } from '@herald/core';
import { ChatApi } from './chat-api.ts';
import type { EventBody } from './chat-api.ts';
import { followHandoff, isHandoffCommand } from './chat-handoff.ts';
import { describeWaiting, heraldSays, StreamedReply, toolLines } from './chat-view.ts';

export { describeWaiting } from './chat-view.ts';

/** How often the chat asks about its open turns and the session's new tool calls. */
const POLL_MS = 400;

/**
 * How a stream that ended in error is shown. A failed turn's message is its committed reply,
 * written for the person (no model configured, every provider down), so it is said as Herald's
 * words; anything else (a dead letter) as an error.
 */
function failureLine(data: Record<string, unknown>, columns: number | undefined): string {
  const message = String(data.message ?? 'the turn failed');
  return data.code === 'turn_failed' ? heraldSays(message, columns) : `error: ${message}\n`;
}

/**
 * `herald chat`: lines go to the API at once and answers come back as they are ready, so a person
 * can type while a turn runs (a message follows the session's queue mode, /stop interrupts). Turns
 * are followed by their event streams (the reply printed as it is written, GET /v1/events/:id/stream)
 * and by polling the transcript (tool calls as they run) and the events (waits; the reply when the
 * stream is not available). Ctrl-C during a turn stops it (as /stop); Ctrl-C otherwise quits.
 */
class TerminalChat {
  readonly #config: Config;
  readonly #api: ChatApi;
  readonly #user = userInfo().username;
  readonly #chatId = `cli-${userInfo().username}`;
  readonly #interactive = process.stdin.isTTY === true;
  readonly #rl: Interface;
  /** Turns sent and not answered yet, with the wait last shown for each. */
  readonly #open = new Map<string, { shownWait?: string; waiting: boolean; live?: boolean }>();
  /** The reply being printed as it streams, while it holds the line. */
  #liveReply: StreamedReply | undefined;
  /** The prompt is on the current line: a streamed piece clears it first. */
  #promptShown = false;
  readonly #closing = new AbortController();
  #sessionId: string | undefined;
  #lastSeq: number | undefined;
  /** Ctrl-C already stopped the running turn: the next one quits. */
  #stopping = false;
  #polling = false;
  #timer: NodeJS.Timeout | undefined;
  #quit: () => void = () => undefined;
  /**
   * The person left: nothing more is printed. An answer still on its way (the /stop a Ctrl-C sent)
   * would redraw the prompt, and the closed readline's prompt resumes stdin: the chat would never exit.
   */
  #closed = false;

  constructor(config: Config) {
    this.#config = config;
    this.#api = new ChatApi(config);
    this.#rl = createInterface({ input: process.stdin, output: process.stdout, terminal: this.#interactive });
  }

  /** Writes above the prompt, keeping what the person is typing. */
  #print(text: string): void {
    if (this.#closed) return;
    if (this.#liveReply) process.stdout.write(this.#liveReply.interrupt());
    if (!this.#interactive) {
      process.stdout.write(text);
      return;
    }
    clearLine(process.stdout, 0);
    cursorTo(process.stdout, 0);
    process.stdout.write(text);
    this.#prompt();
  }

  #prompt(): void {
    if (this.#closed) return;
    this.#rl.prompt(true);
    this.#promptShown = true;
  }

  /** A piece of a reply as it streams in, where the prompt was. */
  #printLive(reply: StreamedReply, text: string): void {
    if (this.#closed) return;
    if (this.#interactive && this.#promptShown) {
      clearLine(process.stdout, 0);
      cursorTo(process.stdout, 0);
      this.#promptShown = false;
    }
    this.#liveReply = reply;
    process.stdout.write(reply.push(text));
  }

  /**
   * Follows a turn's stream: its text as it is written, then the end. When the stream cannot be
   * had (an older server, the connection lost), the polling shows the reply instead.
   */
  async #stream(eventId: string): Promise<void> {
    const state = this.#open.get(eventId);
    if (!state) return;
    const reply = new StreamedReply(process.stdout.columns);
    state.live = true;
    try {
      for await (const item of this.#api.follow(eventId, this.#closing.signal)) {
        if (item.event === 'delta' && typeof item.data.text === 'string') this.#printLive(reply, item.data.text);
        if (item.event !== 'done' && item.event !== 'error') continue;
        this.#open.delete(eventId);
        this.#endLive(reply, item.event === 'error' ? failureLine(item.data, process.stdout.columns) : undefined);
        return;
      }
    } catch {
      // Shown by the polling instead.
    }
    if (this.#liveReply === reply) this.#endLive(reply, undefined);
    state.live = false;
  }

  #endLive(reply: StreamedReply, note: string | undefined): void {
    process.stdout.write(reply.end());
    if (this.#liveReply === reply) this.#liveReply = undefined;
    if (note !== undefined) this.#print(note);
    else if (this.#interactive) this.#prompt();
  }

  #say(text: string): void {
    this.#print(heraldSays(text, process.stdout.columns));
  }

  async #send(text: string): Promise<void> {
    const before = this.#sessionId === undefined ? await this.#sessionBefore() : undefined;
    const { httpStatus, body } = await this.#api.send(this.#chatId, this.#user, text);
    if (httpStatus !== 200 && httpStatus !== 202) {
      this.#print(`error ${httpStatus}: ${body.error?.message ?? 'unexpected answer'}\n`);
      return;
    }
    await this.#follow(body.session_id, before);
    if (body.reply) this.#say(body.reply.text);
    else if (body.event_id !== undefined) {
      this.#open.set(body.event_id, { waiting: false });
      void this.#stream(body.event_id);
    }
    if (body.event_id !== undefined && body.waiting) this.#showWait(body.event_id, body);
    if (body.reply && isHandoffCommand(text) && body.reply.text.startsWith('Handing') && body.session_id !== undefined) {
      this.#print(`${await followHandoff(this.#config, body.session_id)}\n`);
    }
  }

  /**
   * Where the chat's session stands before its first message is sent: the tool calls of that
   * message's turn are the ones after it. Read after the send, a quick model's first tool call
   * would already be there, and never shown.
   */
  async #sessionBefore(): Promise<{ sessionId: string | undefined; seq: number }> {
    const sessionId = await this.#api.liveSession(this.#chatId);
    if (sessionId === undefined) return { sessionId, seq: 0 };
    return { sessionId, seq: (await this.#api.messagesAfter(sessionId, undefined)).at(-1)?.seq ?? 0 };
  }

  /**
   * A session new to this chat: the first message's (from where it stood before the send, or from
   * its start when that message opened it); later ones (/new, a compression) from their newest message.
   */
  async #follow(sessionId: string | undefined, before?: { sessionId: string | undefined; seq: number }): Promise<void> {
    if (sessionId === undefined || sessionId === this.#sessionId) return;
    this.#sessionId = sessionId;
    if (before !== undefined && (before.sessionId === sessionId || before.sessionId === undefined)) {
      this.#lastSeq = before.seq;
      return;
    }
    const newest = await this.#api.messagesAfter(sessionId, undefined);
    this.#lastSeq = newest.at(-1)?.seq ?? 0;
  }

  #showWait(eventId: string, body: EventBody): void {
    const state = this.#open.get(eventId) ?? { waiting: true };
    const key = body.waiting ? `${body.waiting.id ?? ''}:${body.waiting.prompt}` : undefined;
    state.waiting = key !== undefined;
    if (key !== undefined && key !== state.shownWait) {
      state.shownWait = key;
      this.#print(describeWaiting(body.waiting!, process.stdout.columns));
    }
    this.#open.set(eventId, state);
  }

  /** One round: each open turn's event, then the session's new tool calls. */
  async #poll(): Promise<void> {
    if (this.#polling) return;
    this.#polling = true;
    try {
      if (this.#sessionId !== undefined && this.#lastSeq !== undefined) {
        const fresh = await this.#api.messagesAfter(this.#sessionId, this.#lastSeq);
        if (fresh.length > 0) this.#lastSeq = fresh.at(-1)!.seq;
        const lines = toolLines(fresh);
        if (lines !== '') this.#print(lines);
      }
      for (const [eventId, state] of [...this.#open.entries()]) {
        const event = await this.#api.event(eventId);
        // A followed turn's stream prints its reply; the polling shows only its waits.
        if (state.live && (event.status === 'done' || event.status === 'failed')) continue;
        if (event.status === 'done' || event.status === 'failed') {
          this.#open.delete(eventId);
          if (event.reply?.text) this.#say(event.reply.text);
        } else {
          this.#showWait(eventId, event);
        }
      }
    } catch (error) {
      this.#print(`cannot reach Herald at ${this.#api.url}: ${(error as Error).message}\n`);
    } finally {
      this.#polling = false;
    }
  }

  /** Until every turn sent has answered or waits for the person (piped input goes line by line). */
  async #settled(): Promise<void> {
    while ([...this.#open.values()].some((state) => !state.waiting)) {
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
      await this.#poll();
    }
  }

  #interrupt(): void {
    if (this.#open.size === 0 || this.#stopping) {
      this.#quit();
      return;
    }
    this.#stopping = true;
    this.#print('^C stopping the turn (Ctrl-C again quits)\n');
    void this.#send('/stop').catch((error: Error) => this.#print(`cannot reach Herald: ${error.message}\n`));
  }

  async #line(line: string): Promise<boolean> {
    const text = line.trim();
    if (text === '/quit' || text === '/exit') return false;
    if (text !== '') {
      this.#stopping = false;
      try {
        await this.#send(text);
        if (!this.#interactive) await this.#settled();
      } catch (error) {
        this.#print(`cannot reach Herald at ${this.#api.url}: ${(error as Error).message}\n`);
      }
    }
    if (this.#interactive) this.#prompt();
    return true;
  }

  async run(): Promise<void> {
    process.stdout.write(`Herald chat on ${this.#api.url}. /new starts a fresh session, /stop stops a turn, /quit leaves.\n`);
    const quit = new Promise<void>((resolve) => (this.#quit = resolve));
    this.#rl.on('SIGINT', () => this.#interrupt());
    this.#timer = setInterval(() => void this.#poll(), POLL_MS);
    this.#rl.setPrompt('you> ');
    if (this.#interactive) this.#prompt();
    const lines = (async () => {
      for await (const line of this.#rl) if (!(await this.#line(line))) return;
      // Input ended (piped): the answers still on their way are shown first.
      await this.#settled();
    })();
    await Promise.race([lines, quit]);
    this.#closed = true;
    this.#closing.abort();
    clearInterval(this.#timer);
    this.#rl.close();
  }
}

/** An interactive terminal chat against the HTTP API. */
export async function runChat(config: Config): Promise<void> {
  await new TerminalChat(config).run();
}
