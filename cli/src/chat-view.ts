import type { TranscriptMessage, Waiting } from './chat-api.ts';

const PREFIX = 'herald> ';
const INDENT = ' '.repeat(PREFIX.length);

/** Word-wraps one paragraph to `width` columns (a word longer than a line is cut). */
function wrapParagraph(text: string, width: number): string[] {
  const lines: string[] = [];
  let line = '';
  for (const word of text.split(/ +/)) {
    for (let rest = word; rest.length > 0;) {
      const room = line === '' ? width : width - line.length - 1;
      if (rest.length <= room) {
        line = line === '' ? rest : `${line} ${rest}`;
        rest = '';
      } else if (line !== '') {
        lines.push(line);
        line = '';
      } else {
        lines.push(rest.slice(0, width));
        rest = rest.slice(width);
      }
    }
  }
  return [...lines, line];
}

/**
 * Text from Herald, prefixed and wrapped to the terminal (`columns`; no wrapping when unknown),
 * continuation lines indented under the first.
 */
export function heraldSays(text: string, columns: number | undefined): string {
  const width = columns === undefined || columns < PREFIX.length + 20 ? Number.POSITIVE_INFINITY : columns - PREFIX.length - 1;
  const lines = text.split('\n').flatMap((paragraph) => (Number.isFinite(width) ? wrapParagraph(paragraph, width) : [paragraph]));
  return `${lines.map((line, index) => `${index === 0 ? PREFIX : INDENT}${line}`.trimEnd()).join('\n')}\n`;
}

/** A parked turn, shown so the person knows what to type next. */
export function describeWaiting(waiting: Waiting, columns?: number): string {
  if (waiting.kind === 'approval') {
    return heraldSays(`Approval needed for ${waiting.tool}: ${waiting.prompt}\nReply /approve, /approve session (allow this for the rest of the session) or /deny [reason].`, columns);
  }
  const choices = waiting.choices?.length ? `\nChoices: ${waiting.choices.map((c, i) => `${i + 1}) ${c}`).join('  ')}` : '';
  return heraldSays(`${waiting.prompt}${choices}`, columns);
}

function callName(call: NonNullable<TranscriptMessage['tool_calls']>[number]): string {
  return call.function?.name ?? call.name ?? 'tool';
}

function argsOf(call: NonNullable<TranscriptMessage['tool_calls']>[number]): string {
  const raw = call.function?.arguments ?? call.arguments;
  const text = typeof raw === 'string' ? raw : JSON.stringify(raw ?? {});
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

/** The tool activity of new transcript messages, one short line per call and per result. */
export function toolLines(messages: readonly TranscriptMessage[]): string {
  const lines: string[] = [];
  for (const message of messages) {
    for (const call of message.tool_calls ?? []) lines.push(`  ⚙ ${callName(call)} ${argsOf(call)}`);
    if (message.role === 'tool') {
      const first = (message.content ?? '').split('\n')[0] ?? '';
      lines.push(`  ↳ ${message.name ?? 'tool'}: ${first.length > 80 ? `${first.slice(0, 77)}...` : first}`);
    }
  }
  return lines.map((line) => `${line}\n`).join('');
}

/**
 * A reply printed as it streams in: the first piece after the prefix, words wrapped to the terminal
 * as heraldSays wraps a whole reply (continuation lines indented under the first). A word is held
 * until the space after it arrives, so a line never breaks inside one.
 */
export class StreamedReply {
  /** The longest line, prefix included (heraldSays' width plus the prefix). */
  readonly #width: number;
  #column = 0;
  #word = '';
  /** Nothing printed yet: the next text starts with the prefix. */
  #started = false;
  /** At the start of a line that still needs its indent (after a newline or an interruption). */
  #fresh = false;

  constructor(columns: number | undefined) {
    this.#width = columns === undefined || columns < PREFIX.length + 20 ? Number.POSITIVE_INFINITY : columns - 1;
  }

  /** What to write for this piece of text. */
  push(text: string): string {
    let out = '';
    if (!this.#started) {
      this.#started = true;
      this.#column = PREFIX.length;
      out += PREFIX;
    }
    for (const char of text) {
      if (char === '\n') {
        out += `${this.#flushWord()}\n`;
        this.#fresh = true;
      } else if (char === ' ') {
        out += this.#flushWord();
        if (!this.#fresh && this.#column + 1 <= this.#width) {
          out += ' ';
          this.#column++;
        }
      } else this.#word += char;
    }
    return out;
  }

  /** The held word and the end of the line: the reply is complete. */
  end(): string {
    return this.#started ? `${this.#flushWord()}\n` : '';
  }

  /** Something else is printed mid-reply: the line ends here, and the rest continues indented below it. */
  interrupt(): string {
    if (!this.#started || this.#fresh) return '';
    const out = `${this.#flushWord()}\n`;
    this.#fresh = true;
    return out;
  }

  #flushWord(): string {
    const word = this.#word;
    this.#word = '';
    if (word === '') return '';
    let out = '';
    if (this.#fresh) out += INDENT;
    else if (this.#column + word.length > this.#width && this.#column > INDENT.length) out += `\n${INDENT}`;
    else {
      this.#column += word.length;
      return word;
    }
    this.#fresh = false;
    this.#column = INDENT.length + word.length;
    return out + word;
  }
}
