/**
 * The value of a shell arithmetic expansion (`$((6*7))`) when it is made of numbers alone, as bash
 * computes it (64-bit signed integers); null when it names variables or uses anything else, and
 * the guard keeps it as an unknown number. Either way its value is a number, never a command.
 */

const TOKEN = /\s*(\d+|\*\*|[-+*/%()])/y;

class Evaluator {
  readonly #tokens: string[];
  #at = 0;

  constructor(tokens: string[]) {
    this.#tokens = tokens;
  }

  /** The whole expression, or null where a token is left over or missing. */
  value(): bigint | null {
    const value = this.#sum();
    return value !== null && this.#at === this.#tokens.length ? value : null;
  }

  #take(...accepted: string[]): string | null {
    const token = this.#tokens[this.#at];
    if (token === undefined || !accepted.includes(token)) return null;
    this.#at += 1;
    return token;
  }

  #sum(): bigint | null {
    let left = this.#product();
    for (let op = this.#take('+', '-'); op !== null && left !== null; op = this.#take('+', '-')) {
      const right = this.#product();
      left = right === null ? null : BigInt.asIntN(64, op === '+' ? left + right : left - right);
    }
    return left;
  }

  #product(): bigint | null {
    let left = this.#power();
    for (let op = this.#take('*', '/', '%'); op !== null && left !== null; op = this.#take('*', '/', '%')) {
      const right = this.#power();
      if (right === null || (op !== '*' && right === 0n)) return null;
      left = BigInt.asIntN(64, op === '*' ? left * right : op === '/' ? left / right : left % right);
    }
    return left;
  }

  #power(): bigint | null {
    const base = this.#unary();
    if (base === null || this.#take('**') === null) return base;
    const exponent = this.#power();
    if (exponent === null || exponent < 0n || exponent > 64n) return null;
    return BigInt.asIntN(64, base ** exponent);
  }

  #unary(): bigint | null {
    const sign = this.#take('+', '-');
    if (sign !== null) {
      const operand = this.#unary();
      return operand === null ? null : sign === '-' ? BigInt.asIntN(64, -operand) : operand;
    }
    if (this.#take('(') !== null) {
      const inner = this.#sum();
      return this.#take(')') === null ? null : inner;
    }
    const token = this.#tokens[this.#at];
    if (token === undefined || !/^\d+$/.test(token)) return null;
    this.#at += 1;
    // A leading 0 is octal to bash; the guard does not guess at it.
    return token.length > 1 && token.startsWith('0') ? null : BigInt.asIntN(64, BigInt(token));
  }
}

export function constantArithmetic(expression: string): string | null {
  const text = expression.trim();
  const tokens: string[] = [];
  TOKEN.lastIndex = 0;
  while (TOKEN.lastIndex < text.length) {
    const match = TOKEN.exec(text);
    if (match === null) return null;
    tokens.push(match[1]!);
  }
  if (tokens.length === 0) return null;
  return new Evaluator(tokens).value()?.toString() ?? null;
}
