import { describe, expect, it } from 'vitest';
import { OpenAIPrefixCache } from './support/prompt-cache.ts';

// The fake OpenAI's prefix cache counts by hashes of 128-token steps instead of comparing each
// request's bytes with the earlier ones (a soak's driver grew by gigabytes doing that). What it
// reports must be what the byte comparison reported: the longest prefix shared with an earlier
// request of the same key, in 128-token steps, from 1,024 tokens on.

/** The byte comparison the cache replaced, against every earlier request of the key. */
function byteReference(): (key: string, serialized: string) => number {
  const seen = new Map<string, Buffer[]>();
  return (key, serialized) => {
    const current = Buffer.from(serialized, 'utf8');
    let best = 0;
    for (const earlier of seen.get(key) ?? []) {
      let i = 0;
      while (i < Math.min(earlier.length, current.length) && earlier[i] === current[i]) i++;
      best = Math.max(best, i);
    }
    seen.set(key, [...(seen.get(key) ?? []), current]);
    const cached = Math.floor(best / 512) * 128;
    return cached >= 1024 ? Math.min(cached, Math.ceil(current.length / 4)) : 0;
  };
}

describe("the fake OpenAI's prefix cache", () => {
  it('reports what the byte comparison reports for growing, branching and compressed conversations', () => {
    const cache = new OpenAIPrefixCache();
    const reference = byteReference();
    const system = `model:gpt-test\n${'A stable system prompt with tools. '.repeat(180)}`;
    const conversations = new Map<string, string>();
    const answers: number[] = [];
    for (let n = 0; n < 300; n++) {
      const key = `session-${n % 7}`;
      let transcript = conversations.get(key) ?? system;
      // Every 25th request of a key starts over after the system prompt (a compression or /new),
      // every 11th branches off an earlier point; the others grow the conversation by a turn.
      if (n % 25 === 0) transcript = `${system}{"role":"user","content":"summary ${n}"}`;
      else if (n % 11 === 0) transcript = `${transcript.slice(0, Math.floor(transcript.length * 0.7))}{"edited":${n}}`;
      else transcript += `{"role":"user","content":"turn ${n} ${'é'.repeat(n % 90)}"}{"role":"assistant","content":"ok"}`;
      conversations.set(key, transcript);
      const cached = cache.account(key, transcript);
      expect(cached).toBe(reference(key, transcript));
      answers.push(cached);
    }
    // The comparison is not trivial: some requests hit, some miss.
    expect(answers.filter((cached) => cached > 0).length).toBeGreaterThan(100);
    expect(answers.filter((cached) => cached === 0).length).toBeGreaterThan(5);
    expect(cache.account('other key', conversations.get('session-1')!)).toBe(0);
  });

  it('holds at most its bound of digests, however many keys and long prompts it sees', () => {
    const cache = new OpenAIPrefixCache();
    const block = 'x'.repeat(OpenAIPrefixCache.STEP_BYTES);
    // Distinct long prompts under many keys: far more blocks than the bound.
    for (let key = 0; key < 60; key++) cache.account(`k${key}`, `${key}:${block.repeat(4000)}`);
    expect(cache.size).toBeLessThanOrEqual(OpenAIPrefixCache.MAX_BLOCKS);
    expect(cache.size).toBeGreaterThan(OpenAIPrefixCache.MAX_BLOCKS / 2);
    // The newest key was kept whole: its prompt is still a hit.
    expect(cache.account('k59', `59:${block.repeat(4000)}`)).toBe(4000 * 128);
  });
});
