/**
 * A small shell lexer for the command guard: it produces what bash would see once quotes are
 * removed, escapes decoded and simple substitutions folded, split into simple commands. It is not
 * a shell; where it cannot know a value (a variable, an arbitrary substitution) it keeps a marker and
 * hands the substitution's source back so the guard checks it as a command too, and where the text
 * does not parse (an unterminated quote) it says so instead of guessing.
 */

import { constantArithmetic } from './shell-arithmetic.ts';

export interface Word {
  /** The word after quote removal; `$HOME`, `${HOME}` and a leading `~` are folded to `~`. */
  text: string;
  /** Sources of `$(...)`, backtick and `<(...)` substitutions inside this word. */
  substitutions: string[];
}

export interface Redirect {
  operator: string;
  target: string;
  /** Substitutions in the target word (`< $(cmd)`), or in an unquoted here-document's body. */
  substitutions: string[];
  /** A here-document's text (`<<EOF ... EOF`). */
  body?: string;
}

export interface SimpleCommand {
  words: Word[];
  redirects: Redirect[];
  /** The operator that joined this command to the previous one ('|' means it reads a pipe). */
  joinedBy: string | null;
  /** `name() { ...; }`: the words are the function's name; its body follows as commands. */
  definesFunction?: boolean;
}

export interface Script {
  commands: SimpleCommand[];
  /** Why the text does not parse as shell (an unterminated quote, say); null when it does. */
  unparsed: string | null;
}

const OPERATORS = ['&&', '||', '|&', ';;', '|', ';', '&', '\n', '(', ')'];
const REDIRECT = /^(&>>|&>|>>|>\||>&|<<<|<<-|<<|<>|<&|>|<)/;
/** Substitutions nested deeper than this are left unknown; the guard checks their source anyway. */
const MAX_FOLD_DEPTH = 3;

/** Index of the parenthesis closing one opened just before `start`, or -1. */
function findClosing(input: string, start: number): number {
  let depth = 1;
  for (let i = start; i < input.length; i += 1) {
    const char = input[i];
    if (char === '\\') {
      i += 1;
    } else if (char === "'") {
      const end = input.indexOf("'", i + 1);
      if (end === -1) return -1;
      i = end;
    } else if (char === '(') {
      depth += 1;
    } else if (char === ')' && --depth === 0) {
      return i;
    }
  }
  return -1;
}

/** Index of the last `)` of an arithmetic expansion `$((...))` at `start`, or -1 where there is none. */
function arithmeticEnd(input: string, start: number): number {
  if (!input.startsWith('$((', start)) return -1;
  const inner = findClosing(input, start + 3);
  return inner !== -1 && input[inner + 1] === ')' ? inner + 1 : -1;
}

function decodeAnsiC(body: string): string {
  return body.replace(/\\(x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|[0-7]{1,3}|.)/gs, (_match, escape: string) => {
    if (escape[0] === 'x' || escape[0] === 'u') return String.fromCharCode(parseInt(escape.slice(1), 16));
    if (/^[0-7]+$/.test(escape)) return String.fromCharCode(parseInt(escape, 8));
    const simple: Record<string, string> = { n: '\n', t: '\t', r: '\r', a: '\x07', b: '\b', e: '\x1b', f: '\f', v: '\v' };
    return simple[escape] ?? escape;
  });
}

/** The `$(...)` and backtick substitutions in text that the shell expands (an unquoted here-document). */
export function substitutionsIn(text: string): string[] {
  const found: string[] = [];
  for (let i = 0; i < text.length; i += 1) {
    if (text[i] === '\\') i += 1;
    else if (text.startsWith('$(', i) && !text.startsWith('$((', i)) {
      const end = findClosing(text, i + 2);
      found.push(text.slice(i + 2, end === -1 ? text.length : end));
      if (end === -1) break;
      i = end;
    } else if (text[i] === '`') {
      const end = text.indexOf('`', i + 1);
      found.push(text.slice(i + 1, end === -1 ? text.length : end));
      if (end === -1) break;
      i = end;
    }
  }
  return found;
}

/** What a substitution prints, when that is knowable without running it (`echo rm`, `which rm`). */
function literalOutput(source: string, depth: number): string | null {
  if (depth >= MAX_FOLD_DEPTH) return null;
  const { commands } = parse(source, depth + 1);
  if (commands.length !== 1) return null;
  const words = commands[0]!.words.map((word) => word.text);
  const [head, ...rest] = words;
  if (head === 'echo' || head === 'printf') return rest.filter((word) => !/^-[neE]+$/.test(word)).join(' ');
  if (head === 'which' && rest.length === 1) return rest[0]!;
  if (head === 'command' && rest[0] === '-v' && rest.length === 2) return rest[1]!;
  return null;
}

interface PendingHeredoc {
  redirect: Redirect;
  delimiter: string;
  stripTabs: boolean;
  expands: boolean;
}

class Lexer {
  readonly #input: string;
  readonly #depth: number;
  readonly commands: SimpleCommand[] = [];
  unparsed: string | null = null;
  #at = 0;
  #current: SimpleCommand = { words: [], redirects: [], joinedBy: null };
  #word: Word | null = null;
  /** The raw text of the word being read, to tell a quoted here-document delimiter. */
  #raw = '';
  #pendingRedirect: string | null = null;
  #heredocs: PendingHeredoc[] = [];

  constructor(input: string, depth: number) {
    this.#input = input;
    this.#depth = depth;
  }

  run(): Script {
    while (this.#at < this.#input.length) this.#step();
    if (this.#heredocs.length > 0) this.#readHeredocs();
    this.#endCommand(null);
    return { commands: this.commands, unparsed: this.unparsed };
  }

  #fail(reason: string): void {
    this.unparsed ??= reason;
    this.#at = this.#input.length;
  }

  #startWord(): Word {
    return (this.#word ??= { text: '', substitutions: [] });
  }

  #endWord(): void {
    const finished = this.#word;
    if (finished === null) return;
    this.#word = null;
    const raw = this.#raw;
    this.#raw = '';
    // Home folding: `~`, `$HOME` and `${HOME}` all mean the same directory to rm.
    finished.text = finished.text.replace(/^(?:\$\{HOME\}|\$HOME)(?=\/|$)/, '~');
    const operator = this.#pendingRedirect;
    if (operator === null) {
      this.#current.words.push(finished);
      return;
    }
    this.#pendingRedirect = null;
    const redirect: Redirect = { operator, target: finished.text, substitutions: finished.substitutions };
    this.#current.redirects.push(redirect);
    if (operator === '<<' || operator === '<<-') {
      this.#heredocs.push({ redirect, delimiter: finished.text, stripTabs: operator === '<<-', expands: !/['"\\]/.test(raw) });
    }
  }

  #endCommand(operator: string | null): void {
    this.#endWord();
    const current = this.#current;
    if (current.words.length > 0 || current.redirects.length > 0) this.commands.push(current);
    this.#current = { words: [], redirects: [], joinedBy: operator };
  }

  #substitute(source: string): void {
    const target = this.#startWord();
    target.substitutions.push(source);
    target.text += literalOutput(source, this.#depth) ?? '$(...)';
  }

  /** Reads one construct starting at the cursor and moves past it. */
  #step(): void {
    const input = this.#input;
    const start = this.#at;
    const char = input[start]!;
    if (char === '\\') this.#escape();
    else if (char === "'") this.#singleQuoted();
    else if (input.startsWith("$'", start)) this.#ansiC();
    else if (char === '"') this.#doubleQuoted();
    else if (input.startsWith('$((', start)) this.#at = this.#arithmetic(this.#startWord(), start) ?? this.#at;
    else if ((input.startsWith('$(', start) && !input.startsWith('$((', start)) || input.startsWith('<(', start) || input.startsWith('>(', start)) {
      this.#parenSubstitution(start + 2);
    } else if (char === '`') this.#backtick(start + 1);
    else if (char === '#' && this.#word === null) this.#comment();
    else if (char === '>' || char === '<' || (char === '&' && input[start + 1] === '>')) this.#redirect();
    else if (char === ' ' || char === '\t' || char === '\r') {
      this.#endWord();
      this.#at += 1;
    } else this.#operatorOrChar(char);
    if (start >= this.#at && this.unparsed === null) this.#at = start + 1;
  }

  #escape(): void {
    const next = this.#input[this.#at + 1];
    if (next !== '\n') {
      this.#startWord().text += next ?? '';
      this.#raw += '\\';
    }
    this.#at += 2;
  }

  #singleQuoted(): void {
    const end = this.#input.indexOf("'", this.#at + 1);
    if (end === -1) return this.#fail('an unterminated single quote');
    this.#startWord().text += this.#input.slice(this.#at + 1, end);
    this.#raw += "'";
    this.#at = end + 1;
  }

  #ansiC(): void {
    let end = this.#at + 2;
    while (end < this.#input.length && this.#input[end] !== "'") end += this.#input[end] === '\\' ? 2 : 1;
    if (end >= this.#input.length) return this.#fail("an unterminated $'...' string");
    this.#startWord().text += decodeAnsiC(this.#input.slice(this.#at + 2, end));
    this.#raw += "'";
    this.#at = end + 1;
  }

  #doubleQuoted(): void {
    const input = this.#input;
    const word = this.#startWord();
    this.#raw += '"';
    let j = this.#at + 1;
    for (; j < input.length && input[j] !== '"'; j += 1) {
      if (input[j] === '\\' && '$`"\\\n'.includes(input[j + 1] ?? '')) {
        if (input[j + 1] !== '\n') word.text += input[j + 1];
        j += 1;
      } else if (arithmeticEnd(input, j) !== -1) {
        j = this.#arithmetic(word, j)! - 1;
      } else if (input.startsWith('$(', j) && !input.startsWith('$((', j)) {
        const end = findClosing(input, j + 2);
        if (end === -1) return this.#fail('an unterminated $( substitution');
        this.#substitute(input.slice(j + 2, end));
        j = end;
      } else if (input[j] === '`') {
        const end = input.indexOf('`', j + 1);
        if (end === -1) return this.#fail('an unterminated backtick substitution');
        this.#substitute(input.slice(j + 1, end));
        j = end;
      } else {
        word.text += input[j];
      }
    }
    if (j >= input.length) return this.#fail('an unterminated double quote');
    this.#at = j + 1;
  }

  /**
   * `$((...))` at `start`: arithmetic, whose value is a number and never a command. Its text is the
   * value where the expression is made of numbers alone, `$((...))` otherwise; the `$(...)` and
   * backtick substitutions inside still run, and are checked as commands. Returns the index after
   * it; `$( (subshell) )` that only looks like arithmetic is read as a substitution.
   */
  #arithmetic(word: Word, start: number): number | null {
    const end = arithmeticEnd(this.#input, start);
    if (end === -1) {
      this.#parenSubstitution(start + 2);
      return null;
    }
    const body = this.#input.slice(start + 3, end - 1);
    word.substitutions.push(...substitutionsIn(body));
    word.text += constantArithmetic(body) ?? '$((...))';
    return end + 1;
  }

  #parenSubstitution(from: number): void {
    const end = findClosing(this.#input, from);
    if (end === -1) return this.#fail('an unterminated $( substitution');
    this.#substitute(this.#input.slice(from, end));
    this.#at = end + 1;
  }

  #backtick(from: number): void {
    const end = this.#input.indexOf('`', from);
    if (end === -1) return this.#fail('an unterminated backtick substitution');
    this.#substitute(this.#input.slice(from, end));
    this.#at = end + 1;
  }

  #comment(): void {
    const end = this.#input.indexOf('\n', this.#at);
    this.#at = end === -1 ? this.#input.length : end;
  }

  #redirect(): void {
    // A word made only of digits right before the operator is a file descriptor (2>file).
    const fdWord = this.#word;
    if (fdWord !== null && /^\d+$/.test(fdWord.text) && fdWord.substitutions.length === 0) {
      this.#word = null;
      this.#raw = '';
    }
    this.#endWord();
    let operator = REDIRECT.exec(this.#input.slice(this.#at, this.#at + 3))![1]!;
    this.#at += operator.length;
    if (operator === '>&' || operator === '<&') {
      // `2>&1`, `<&3`: a descriptor, kept as the target; `>&file` is a plain redirect to a file.
      const dup = /^[0-9-]+/.exec(this.#input.slice(this.#at, this.#at + 32));
      if (dup) {
        this.#at += dup[0].length;
        this.#current.redirects.push({ operator, target: `&${dup[0]}`, substitutions: [] });
        return;
      }
      operator = '>';
    }
    this.#pendingRedirect = operator;
  }

  #operatorOrChar(char: string): void {
    const rest = this.#input.slice(this.#at, this.#at + 3);
    const operator = OPERATORS.find((candidate) => rest.startsWith(candidate));
    if (operator === '(' && /^\(\s*\)/.test(this.#input.slice(this.#at, this.#at + 64)) && this.#current.words.length + (this.#word ? 1 : 0) === 1) {
      // `name() ...`: a function definition; its body follows as ordinary commands.
      this.#endWord();
      this.#current.definesFunction = true;
      this.#at = this.#input.indexOf(')', this.#at) + 1;
      return this.#endCommand(';');
    }
    if (operator !== undefined) {
      this.#endCommand(operator === '\n' || operator === ';;' ? ';' : operator);
      this.#at += operator.length;
      if (operator === '\n' && this.#heredocs.length > 0) this.#readHeredocs();
    } else if ((char === '{' || char === '}') && this.#word === null && /^[{}](\s|$|;)/.test(rest)) {
      this.#endCommand(';');
      this.#at += 1;
    } else {
      this.#startWord().text += char;
      this.#raw += char;
      this.#at += 1;
    }
  }

  /** After a line with `<<WORD` redirects, their bodies follow, each up to its delimiter line. */
  #readHeredocs(): void {
    for (const heredoc of this.#heredocs) {
      const lines: string[] = [];
      while (this.#at < this.#input.length) {
        const end = this.#input.indexOf('\n', this.#at);
        const raw = this.#input.slice(this.#at, end === -1 ? this.#input.length : end);
        this.#at = end === -1 ? this.#input.length : end + 1;
        const line = heredoc.stripTabs ? raw.replace(/^\t+/, '') : raw;
        if (line === heredoc.delimiter) break;
        lines.push(line);
      }
      heredoc.redirect.body = lines.join('\n');
      if (heredoc.expands) heredoc.redirect.substitutions.push(...substitutionsIn(heredoc.redirect.body));
    }
    this.#heredocs = [];
  }
}

export function parse(input: string, depth = 0): Script {
  return new Lexer(input, depth).run();
}

export function lex(input: string, depth = 0): SimpleCommand[] {
  return parse(input, depth).commands;
}
