import type { Logger } from '@herald/core';
import { DeliveryError } from '@herald/delivery';
import type { DraftCalls } from '@herald/delivery';
import type { StreamView } from '@herald/queue';
import { splitMarkdown } from './markdown-split.ts';

/** Shown at the end of a draft while the answer is still being written: a draft is never mistaken for the answer. */
export const DRAFT_CURSOR = ' ▍';
/** Room kept in each draft message for the cursor and the tool line. */
const SUFFIX_ROOM = 96;
/** Platform calls that fail in a row (other than rate limits) before a draft gives up for this turn. */
const MAX_FAILURES = 3;

export interface DraftPacing {
  /** The least time between two rounds of edits in one chat (about one edit a second). */
  intervalMs: number;
  /** New characters that make an edit worth it; a changed tool line always is. */
  minChars: number;
}

export const DEFAULT_PACING: DraftPacing = { intervalMs: 1000, minChars: 40 };

export interface DraftStreamOptions {
  calls: DraftCalls;
  /** The chat as the outbox stores it (chatId, threadId, chatType, replyTo). */
  target: Record<string, string>;
  /** Messages already posted for this answer (a turn resumed after a crash continues them). */
  messageIds: readonly string[];
  /** Stores the messages' ids after a new one is posted: the reply's delivery edits them into the answer. */
  record(messageIds: readonly string[]): Promise<void>;
  /** Forgets the stored ids: the draft was taken back out of the chat. */
  forget(): Promise<void>;
  /** Asked before the first message is posted; false while an earlier message to the chat is still going out. */
  mayStart(): Promise<boolean>;
  pacing: DraftPacing;
  logger: Logger;
}

/** The short line under the text while a tool runs; replaced by the next one, gone when text follows. */
function toolLine(view: Extract<StreamView, { type: 'tool' }>): string {
  const mark = view.status === 'start' ? '⚙️' : view.status === 'end' ? '✓' : '✗';
  return `${mark} ${view.name}${view.status === 'start' ? '…' : ''}`;
}

/** The line while the conversation is compressed (a summary is written before the answer goes on). */
export const COMPRESSION_LINE = '🗜️ compressing earlier messages…';

/**
 * One answer shown growing in a chat by editing its messages (docs/decisions/2026-12-06-chat-drafts.md).
 * Text and tool progress come in as they happen; at most one round of edits goes out per interval,
 * and only when enough new text arrived or the tool line changed; a rate-limit answer postpones the
 * next round by its retry-after. Text that outgrows one message continues in a new one. The drafts
 * are plain text with a cursor; the committed reply's delivery edits them into the formatted answer.
 */
export class DraftStream {
  readonly #options: DraftStreamOptions;
  readonly #ids: string[];
  /** What each message shows now, by position. */
  readonly #shown: string[] = [];
  #text = '';
  #tool: string | undefined;
  #flushedChars = 0;
  #flushedTool: string | undefined;
  #nextAt = 0;
  #timer: NodeJS.Timeout | undefined;
  #busy: Promise<void> | undefined;
  #failures = 0;
  #stopped = false;

  constructor(options: DraftStreamOptions) {
    this.#options = options;
    this.#ids = [...options.messageIds];
  }

  /** The draft's messages, oldest first. */
  get messageIds(): readonly string[] {
    return this.#ids;
  }

  take(view: StreamView): void {
    if (view.type === 'delta') {
      this.#text += view.text;
      this.#tool = undefined;
    } else if (view.type === 'tool') this.#tool = toolLine(view);
    // The same one line as a tool's: replaced by what comes next, gone once the compression ended.
    else this.#tool = view.status === 'start' ? COMPRESSION_LINE : undefined;
    this.#schedule();
  }

  /** Waits for the edit in progress and stops the pending one: called before the reply commits. */
  async settle(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    while (this.#busy) await this.#busy;
  }

  /** Takes the draft back out of the chat: the turn paused or ended without an answer to edit it into. */
  async discard(): Promise<void> {
    this.#stopped = true;
    await this.settle();
    for (const id of this.#ids) {
      await this.#options.calls.remove(this.#options.target, id, AbortSignal.timeout(10_000)).catch((error: unknown) => this.#options.logger.debug({ err: error }, 'could not remove a draft message'));
    }
    this.#ids.length = 0;
    this.#shown.length = 0;
    await this.#options.forget().catch((error: unknown) => this.#options.logger.debug({ err: error }, 'could not forget the draft'));
  }

  #due(): boolean {
    if (this.#text.length === 0 && this.#tool === undefined) return false;
    // The first words go out as soon as they come: the time to the first delta is what a person waits.
    if (this.#ids.length === 0 && this.#text.length > 0) return true;
    return this.#tool !== this.#flushedTool || this.#text.length - this.#flushedChars >= this.#options.pacing.minChars;
  }

  #schedule(): void {
    if (this.#stopped || this.#busy || this.#timer || !this.#due()) return;
    // A tool with nothing written yet is shown only once it has run a while: a quick tool, or one
    // that stops for an approval (whose question is the next message), leaves no draft behind.
    if (this.#ids.length === 0 && this.#text.length === 0) this.#nextAt = Math.max(this.#nextAt, Date.now() + this.#options.pacing.intervalMs);
    this.#timer = setTimeout(
      () => {
        this.#timer = undefined;
        // What was due may be gone by now: a compression that ended before its line was shown.
        if (!this.#due()) return;
        this.#busy = this.#flush().finally(() => {
          this.#busy = undefined;
          this.#schedule();
        });
      },
      Math.max(0, this.#nextAt - Date.now()),
    );
  }

  /** The messages as they should read now: the text split to fit, the last with the tool line and cursor. */
  #render(): string[] {
    const parts = splitMarkdown(this.#text, this.#options.calls.maxChars - SUFFIX_ROOM);
    const last = parts.pop() ?? '';
    const tail = [last, this.#tool].filter((piece) => piece !== undefined && piece !== '').join('\n\n');
    return [...parts, `${tail}${DRAFT_CURSOR}`];
  }

  async #flush(): Promise<void> {
    this.#flushedChars = this.#text.length;
    this.#flushedTool = this.#tool;
    try {
      await this.#apply(this.#render());
      this.#failures = 0;
      this.#nextAt = Date.now() + this.#options.pacing.intervalMs;
    } catch (error) {
      this.#failed(error);
    }
  }

  async #apply(messages: string[]): Promise<void> {
    const { calls, target } = this.#options;
    for (const [index, text] of messages.entries()) {
      if (this.#shown[index] === text) continue;
      const signal = AbortSignal.timeout(15_000);
      const id = this.#ids[index];
      if (id !== undefined && (await calls.edit(target, id, text, signal))) {
        this.#shown[index] = text;
        continue;
      }
      if (id === undefined && index === 0 && !(await this.#options.mayStart())) {
        // An earlier message to this chat is still going out: try again after a while.
        this.#flushedChars = 0;
        return;
      }
      // A new message, or one the person deleted: posted (again) in its place.
      this.#ids[index] = await calls.post(target, text, index === 0, signal);
      await this.#options.record(this.#ids);
      this.#shown[index] = text;
    }
  }

  #failed(error: unknown): void {
    // The round is repeated once the wait is over: it covers what came meanwhile.
    this.#flushedChars = 0;
    this.#flushedTool = undefined;
    if (DeliveryError.isInstance(error) && error.retryAfterMs !== undefined) {
      this.#nextAt = Date.now() + error.retryAfterMs;
      this.#options.logger.info({ retryAfterMs: error.retryAfterMs }, 'draft edits rate-limited; waiting as asked');
      return;
    }
    this.#failures++;
    this.#nextAt = Date.now() + this.#options.pacing.intervalMs * 2 ** this.#failures;
    if (this.#failures >= MAX_FAILURES) this.#stopped = true;
    this.#options.logger.warn({ err: error, failures: this.#failures }, this.#stopped ? 'draft edits keep failing; the answer arrives when committed' : 'draft edit failed');
  }
}
