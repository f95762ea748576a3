import { createHash } from 'node:crypto';

/** The fake models' prompt caches: what OpenAI and Anthropic report as cached input, approximately. */

/** Token counts are approximated as one token per 4 bytes of serialized JSON, rounded up. */
export const tokens = (bytes: number) => Math.ceil(bytes / 4);
export const bytes = (text: string) => Buffer.byteLength(text, 'utf8');

/**
 * OpenAI's automatic prefix cache, approximately: the longest prefix of the serialized
 * model + tools + messages this request shares with an earlier request of the same
 * prompt_cache_key (requests without one share the '' bucket), in 128-token steps (512 bytes of
 * 4-byte tokens), and only from 1,024 tokens on. Like the real cache, it is hashed per 128-token
 * block: each step's cumulative hash is remembered per key, so a request costs one hash pass over
 * its bytes and a key holds one short digest per distinct 512-byte prefix (a soak sends thousands
 * of long transcripts; keeping their bytes to compare against grew its driver by gigabytes).
 * Bounded like the real one: past MAX_BLOCKS digests in all, the least recently used keys are
 * evicted (a key alone past it loses its least recently seen blocks). The bound is 25 million
 * tokens of distinct prefixes in about 15 MB, which no test or benchmark reaches; no TTL.
 */
export class OpenAIPrefixCache {
  static readonly STEP_BYTES = 512;
  static readonly MIN_TOKENS = 1024;
  static readonly MAX_BLOCKS = 200_000;
  /** Per key, its prefixes' digests, least recently seen first; the map's order is the keys' recency. */
  readonly #seen = new Map<string, Set<string>>();
  #size = 0;

  account(key: string, serialized: string): number {
    const current = Buffer.from(serialized, 'utf8');
    const blocks = this.#seen.get(key) ?? new Set<string>();
    this.#seen.delete(key);
    this.#seen.set(key, blocks);
    const hash = createHash('sha1');
    let best = 0;
    for (let end = OpenAIPrefixCache.STEP_BYTES; end <= current.length; end += OpenAIPrefixCache.STEP_BYTES) {
      hash.update(current.subarray(end - OpenAIPrefixCache.STEP_BYTES, end));
      const digest = hash.copy().digest('base64');
      // Cumulative digests: a prefix of k steps is shared only if every shorter one is.
      if (best === end - OpenAIPrefixCache.STEP_BYTES && blocks.has(digest)) best = end;
      this.#touch(blocks, digest);
    }
    this.#evict(blocks);
    const cached = best / 4;
    return cached >= OpenAIPrefixCache.MIN_TOKENS ? Math.min(cached, tokens(current.length)) : 0;
  }

  /** How many digests are held over all keys: what the bound limits. */
  get size(): number {
    return this.#size;
  }

  #touch(blocks: Set<string>, digest: string): void {
    if (blocks.delete(digest)) this.#size -= 1;
    blocks.add(digest);
    this.#size += 1;
  }

  /** Least recently used keys first, then the current key's least recently seen blocks. */
  #evict(current: Set<string>): void {
    for (const [key, blocks] of this.#seen) {
      if (this.#size <= OpenAIPrefixCache.MAX_BLOCKS || blocks === current) break;
      this.#seen.delete(key);
      this.#size -= blocks.size;
    }
    for (const digest of current) {
      if (this.#size <= OpenAIPrefixCache.MAX_BLOCKS) break;
      current.delete(digest);
      this.#size -= 1;
    }
  }
}

/**
 * Anthropic's explicit cache, approximately. The prompt is a sequence of blocks in cache order:
 * tools, then system blocks, then each message's content blocks, each serialized without its
 * cache_control (a moving breakpoint must not change the bytes before it), under the model's name.
 * - A write happens at each cache_control breakpoint: the whole prefix up to it is cached.
 * - A read is the longest previously written prefix found at a block boundary at or up to 20
 *   blocks before one of this request's breakpoints (the API's lookback), so last turn's rolling
 *   tail breakpoint is read back when the conversation has grown by a turn.
 * - cache_creation_input_tokens is the rest up to the request's last breakpoint;
 *   input_tokens is everything after it.
 * Prefixes under 1,024 tokens are neither written nor read, as on the real API (the exact minimum
 * depends on the model). No TTL, no eviction, one cache per fake server (the real one is per
 * workspace, not per session).
 */
export class AnthropicPrefixCache {
  static readonly LOOKBACK_BLOCKS = 20;
  static readonly MIN_TOKENS = 1024;
  readonly #written = new Set<string>();
  account(body: any): { read: number; write: number; total: number } {
    const parts: { text: string; breakpoint: boolean }[] = [];
    const strip = (block: any) => JSON.stringify({ ...block, cache_control: undefined });
    for (const tool of body.tools ?? []) parts.push({ text: `tool:${strip(tool)}`, breakpoint: !!tool.cache_control });
    const system = typeof body.system === 'string' ? [{ type: 'text', text: body.system }] : (body.system ?? []);
    for (const block of system) parts.push({ text: `system:${strip(block)}`, breakpoint: !!block.cache_control });
    (body.messages ?? []).forEach((message: any, index: number) => {
      const blocks = typeof message.content === 'string' ? [{ type: 'text', text: message.content }] : (message.content ?? []);
      for (const block of blocks) {
        parts.push({ text: `${index}:${message.role}:${strip(block)}`, breakpoint: !!block.cache_control });
      }
    });
    // Cumulative hash and token length at every block boundary.
    const hash = createHash('sha256').update(`model:${String(body.model)}\n`);
    let size = 0;
    const boundaries = parts.map((part) => {
      hash.update(part.text);
      size += bytes(part.text);
      return { key: hash.copy().digest('hex'), tokens: tokens(size), breakpoint: part.breakpoint };
    });
    const cacheable = (boundary: { tokens: number }) => boundary.tokens >= AnthropicPrefixCache.MIN_TOKENS;
    let read = 0;
    let lastBreakpoint = 0;
    boundaries.forEach((boundary, index) => {
      if (!boundary.breakpoint || !cacheable(boundary)) return;
      lastBreakpoint = boundary.tokens;
      for (let j = index; j >= 0 && j >= index - AnthropicPrefixCache.LOOKBACK_BLOCKS; j--) {
        const candidate = boundaries[j];
        if (candidate && cacheable(candidate) && this.#written.has(candidate.key)) {
          read = Math.max(read, candidate.tokens);
          break;
        }
      }
    });
    for (const boundary of boundaries) if (boundary.breakpoint && cacheable(boundary)) this.#written.add(boundary.key);
    const total = tokens(size);
    return { read, write: Math.max(0, lastBreakpoint - read), total };
  }
}
