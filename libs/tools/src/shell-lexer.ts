/**
 * A small shell lexer for the command guard: it produces what bash would see once quotes are
 * removed, escapes decoded and simple substitutions folded, split into simple commands. It is not
 * a shell; where it cannot know a value (a variable, an arbitrary substitution) it keeps a marker and
 * hands the substitution's source back so the guard checks it as a command too.
 */

export interface Word {
  /** The word after quote removal; `$HOME`, `${HOME}` and a leading `~` are folded to `~`. */
  text: string;
  /** Sources of `$(...)`, backtick and `<(...)` substitutions inside this word. */
  substitutions: string[];
}

export interface Redirect {
  operator: string;
  target: string;
}

export interface SimpleCommand {
  words: Word[];
  redirects: Redirect[];
  /** The operator that joined this command to the previous one ('|' means it reads a pipe). */
  joinedBy: string | null;
}

const OPERATORS = ['&&', '||', '|&', ';;', '|', ';', '&', '\n', '(', ')'];

function findClosing(input: string, start: number, open: string, close: string): number {
  let depth = 1;
  for (let i = start; i < input.length; i += 1) {
    const char = input[i];
    if (char === '\\') {
      i += 1;
    } else if (char === "'") {
      const end = input.indexOf("'", i + 1);
      if (end === -1) return input.length;
      i = end;
    } else if (char === open) {
      depth += 1;
    } else if (char === close) {
      depth -= 1;
      if (depth === 0) return i;
    }
  }
  return input.length;
}

function decodeAnsiC(body: string): string {
  return body.replace(/\\(x[0-9a-fA-F]{1,2}|u[0-9a-fA-F]{1,4}|[0-7]{1,3}|.)/gs, (_match, escape: string) => {
    if (escape[0] === 'x' || escape[0] === 'u') return String.fromCharCode(parseInt(escape.slice(1), 16));
    if (/^[0-7]+$/.test(escape)) return String.fromCharCode(parseInt(escape, 8));
    const simple: Record<string, string> = { n: '\n', t: '\t', r: '\r', a: '\x07', b: '\b', e: '\x1b', f: '\f', v: '\v' };
    return simple[escape] ?? escape;
  });
}

/** What a substitution prints, when that is knowable without running it (`echo rm`, `which rm`). */
function literalOutput(source: string, depth: number): string | null {
  // Substitutions nested deeper than this are left unknown; the guard checks their source anyway.
  if (depth >= 3) return null;
  const commands = lex(source, depth + 1);
  if (commands.length !== 1) return null;
  const words = commands[0]!.words.map((word) => word.text);
  const [head, ...rest] = words;
  if (head === 'echo' || head === 'printf') return rest.filter((word) => !/^-[neE]+$/.test(word)).join(' ');
  if (head === 'which' && rest.length === 1) return rest[0]!;
  if (head === 'command' && rest[0] === '-v' && rest.length === 2) return rest[1]!;
  return null;
}

export function lex(input: string, depth = 0): SimpleCommand[] {
  const commands: SimpleCommand[] = [];
  let current: SimpleCommand = { words: [], redirects: [], joinedBy: null };
  let word: Word | null = null;
  let pendingRedirect: string | null = null;

  const startWord = (): Word => (word ??= { text: '', substitutions: [] });
  const endWord = () => {
    if (word === null) return;
    const finished: Word = word;
    word = null;
    // Home folding: `~`, `$HOME` and `${HOME}` all mean the same directory to rm.
    finished.text = finished.text.replace(/^(?:\$\{HOME\}|\$HOME)(?=\/|$)/, '~');
    if (pendingRedirect !== null) {
      current.redirects.push({ operator: pendingRedirect, target: finished.text });
      pendingRedirect = null;
    } else {
      current.words.push(finished);
    }
  };
  const endCommand = (operator: string | null) => {
    endWord();
    if (current.words.length > 0 || current.redirects.length > 0) commands.push(current);
    current = { words: [], redirects: [], joinedBy: operator };
  };
  const substitute = (source: string) => {
    const target = startWord();
    target.substitutions.push(source);
    target.text += literalOutput(source, depth) ?? '$(...)';
  };

  for (let i = 0; i < input.length; i += 1) {
    const char = input[i]!;
    const rest = input.slice(i);
    if (char === '\\') {
      if (input[i + 1] === '\n') {
        i += 1;
        continue;
      }
      startWord().text += input[i + 1] ?? '';
      i += 1;
    } else if (char === "'") {
      const end = input.indexOf("'", i + 1);
      const stop = end === -1 ? input.length : end;
      startWord().text += input.slice(i + 1, stop);
      i = stop;
    } else if (rest.startsWith("$'")) {
      let end = i + 2;
      while (end < input.length && input[end] !== "'") end += input[end] === '\\' ? 2 : 1;
      startWord().text += decodeAnsiC(input.slice(i + 2, end));
      i = end;
    } else if (char === '"') {
      startWord();
      let j = i + 1;
      for (; j < input.length && input[j] !== '"'; j += 1) {
        const inner = input[j]!;
        if (inner === '\\' && '$`"\\\n'.includes(input[j + 1] ?? '')) {
          if (input[j + 1] !== '\n') word!.text += input[j + 1];
          j += 1;
        } else if (input.startsWith('$(', j) && !input.startsWith('$((', j)) {
          const end = findClosing(input, j + 2, '(', ')');
          substitute(input.slice(j + 2, end));
          j = end;
        } else if (inner === '`') {
          const end = input.indexOf('`', j + 1);
          const stop = end === -1 ? input.length : end;
          substitute(input.slice(j + 1, stop));
          j = stop;
        } else {
          word!.text += inner;
        }
      }
      i = j;
    } else if ((rest.startsWith('$(') && !rest.startsWith('$((')) || rest.startsWith('<(') || rest.startsWith('>(')) {
      const end = findClosing(input, i + 2, '(', ')');
      substitute(input.slice(i + 2, end));
      i = end;
    } else if (char === '`') {
      const end = input.indexOf('`', i + 1);
      const stop = end === -1 ? input.length : end;
      substitute(input.slice(i + 1, stop));
      i = stop;
    } else if (char === '#' && word === null) {
      const end = input.indexOf('\n', i);
      i = end === -1 ? input.length : end - 1;
    } else if (char === '>' || char === '<' || (char === '&' && input[i + 1] === '>')) {
      // A word made only of digits right before the operator is a file descriptor (2>file).
      const fdWord = word as Word | null;
      if (fdWord !== null && /^\d+$/.test(fdWord.text) && fdWord.substitutions.length === 0) word = null;
      endWord();
      const match = /^(&>>|&>|>>|>\||>&|<<<|<<-|<<|<>|<&|>|<)/.exec(rest)!;
      let operator = match[1]!;
      i += operator.length - 1;
      if (operator === '>&' || operator === '<&') {
        const dup = /^[0-9-]+/.exec(input.slice(i + 1));
        if (dup) {
          i += dup[0].length;
          continue;
        }
        operator = '>';
      }
      pendingRedirect = operator;
    } else if (char === ' ' || char === '\t' || char === '\r') {
      endWord();
    } else {
      const operator = OPERATORS.find((candidate) => rest.startsWith(candidate));
      if (operator !== undefined) {
        endCommand(operator === '\n' || operator === ';;' ? ';' : operator);
        i += operator.length - 1;
      } else if ((char === '{' || char === '}') && word === null && /^[{}](\s|$|;)/.test(rest)) {
        endCommand(';');
      } else {
        startWord().text += char;
      }
    }
  }
  endCommand(null);
  return commands;
}
