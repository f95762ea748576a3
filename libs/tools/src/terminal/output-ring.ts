/**
 * The newest `cap` characters of a stream, with absolute positions: what was dropped from the front
 * is counted, so a reader that remembers a position reads only what came after it.
 */
export class OutputRing {
  readonly #cap: number;
  #text = '';
  #dropped = 0;

  constructor(cap: number) {
    this.#cap = cap;
  }

  push(chunk: string): void {
    this.#text += chunk;
    if (this.#text.length > this.#cap) {
      const cut = this.#text.length - this.#cap;
      this.#text = this.#text.slice(cut);
      this.#dropped += cut;
    }
  }

  /** Position after the last character ever written. */
  get end(): number {
    return this.#dropped + this.#text.length;
  }

  /** Text from an absolute position on, and how much before it was lost to the ring. */
  since(position: number): { text: string; lost: number } {
    const from = Math.max(position, this.#dropped);
    return { text: this.#text.slice(from - this.#dropped), lost: from - position };
  }

  /** The last `chars` characters kept. */
  tail(chars: number): string {
    return this.#text.slice(-chars);
  }

  text(): string {
    return this.#text;
  }
}
