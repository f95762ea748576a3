import { describe, expect, it } from 'vitest';
import { FailoverProvider, LocalCooldowns, ProviderError } from '../src/index.ts';
import type { CompletionRequest, CompletionResult, Provider } from '../src/index.ts';
import type { ChainEntry } from '@herald/core';

const ok = (text: string): CompletionResult => ({
  content: text,
  toolCalls: [],
  finishReason: 'stop',
  usage: { inputTokens: 1, outputTokens: 1, cachedInputTokens: 0, cacheWriteTokens: 0 },
  model: 'm',
});

const entry = (ref: string, keys: string[]): ChainEntry => {
  const [name = '', model = ''] = ref.split('/');
  return { ref, model, provider: { name, type: 'openai', baseURL: undefined, keys: keys.map((key) => ({ name: key, value: key })) } };
};

/** Each key answers as `script` says; the calls are recorded as `ref#key`. */
function chainOf(chain: ChainEntry[], script: Record<string, () => CompletionResult>, calls: string[], cooldowns = new LocalCooldowns()) {
  return new FailoverProvider({
    chain,
    cooldowns,
    timeoutMs: 1000,
    create: (at, key): Provider => ({
      name: at.provider.name,
      model: at.model,
      complete: async () => {
        calls.push(`${at.ref}#${key}`);
        return script[`${at.ref}#${key}`]!();
      },
    }),
  });
}

const request: CompletionRequest = { sessionId: 's', system: '', messages: [{ role: 'user', content: 'hi' }], tools: [] };
const fail = (kind: ProviderError['kind'], retryAfterMs?: number) => () => {
  throw new ProviderError(kind, { kind, ...(retryAfterMs === undefined ? {} : { retryAfterMs }) });
};

describe('FailoverProvider', () => {
  it('tries the next key, then the next model, and says which answered', async () => {
    const calls: string[] = [];
    const provider = chainOf([entry('a/m1', ['K1', 'K2']), entry('b/m2', ['K3'])], { 'a/m1#K1': fail('rate_limit', 5000), 'a/m1#K2': fail('server'), 'b/m2#K3': () => ok('fine') }, calls);
    const result = await provider.complete(request);
    expect(result).toMatchObject({ content: 'fine', provider: 'b', keyName: 'K3' });
    expect(calls).toEqual(['a/m1#K1', 'a/m1#K2', 'b/m2#K3']);
  });

  it('skips a resting key on later calls while another is usable', async () => {
    const calls: string[] = [];
    const provider = chainOf([entry('a/m1', ['K1', 'K2'])], { 'a/m1#K1': fail('rate_limit', 60_000), 'a/m1#K2': () => ok('k2') }, calls);
    expect((await provider.complete(request)).keyName).toBe('K2');
    expect((await provider.complete(request)).keyName).toBe('K2');
    expect(calls).toEqual(['a/m1#K1', 'a/m1#K2', 'a/m1#K2']);
  });

  it('when every key rests, tries the one back soonest, and passes its Retry-After on to the caller', async () => {
    const calls: string[] = [];
    const provider = chainOf([entry('a/m1', ['K1', 'K2'])], { 'a/m1#K1': fail('rate_limit', 60_000), 'a/m1#K2': fail('rate_limit', 5_000) }, calls);
    const first = (await provider.complete(request).catch((caught: unknown) => caught)) as ProviderError;
    expect(first).toMatchObject({ kind: 'rate_limit', retryAfterMs: 5_000 });
    expect(first.isRetryable).toBe(true);
    await provider.complete(request).catch(() => undefined);
    expect(calls).toEqual(['a/m1#K1', 'a/m1#K2', 'a/m1#K2']);
  });

  it('throws a bad request or a context overflow at once, without touching the other keys', async () => {
    for (const kind of ['bad_request', 'context_overflow'] as const) {
      const calls: string[] = [];
      const provider = chainOf([entry('a/m1', ['K1', 'K2']), entry('b/m2', ['K3'])], { 'a/m1#K1': fail(kind) }, calls);
      await expect(provider.complete(request)).rejects.toMatchObject({ kind });
      expect(calls).toEqual(['a/m1#K1']);
    }
  });

  it('restarts the streamed answer when it moves on after a failure', async () => {
    let restarts = 0;
    const provider = chainOf([entry('a/m1', ['K1', 'K2'])], { 'a/m1#K1': fail('timeout'), 'a/m1#K2': () => ok('x') }, []);
    await provider.complete({ ...request, onDelta: () => undefined, onRestart: () => (restarts += 1) });
    expect(restarts).toBe(1);
  });
});
