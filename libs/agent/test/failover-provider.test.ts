import { describe, expect, it } from 'vitest';
import { loadProviders, modelChain } from '@herald/core';
import { describeProviderFailure, FailoverProvider, LocalCooldowns, ProviderError } from '../src/index.ts';
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
  const setup = { keys: keys.join(', '), baseURL: `${name}.base_url` };
  return { ref, model, provider: { name, type: 'openai', baseURL: undefined, keys: keys.map((key) => ({ name: key, value: key })), setup } };
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
const fail = (kind: ProviderError['kind'], retryAfterMs?: number, status?: number) => () => {
  throw new ProviderError(kind, { kind, ...(retryAfterMs === undefined ? {} : { retryAfterMs }), ...(status === undefined ? {} : { status }) });
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

describe('the line a person gets when every key and model failed', () => {
  const env = { POOL_KEY_A: 'sk-pool-a', POOL_KEY_B: 'sk-pool-b', BACKUP_KEY: 'sk-ant-backup', OPENAI_API_KEY: 'sk-openai' };
  const file = { path: 'providers.yaml', text: 'pool:\n  type: openai\n  api_key_envs: [POOL_KEY_A, POOL_KEY_B]\nbackup:\n  type: anthropic\n  api_key_env: BACKUP_KEY\n' };
  const chain = modelChain(['pool/fast', 'backup/steady', 'openai/gpt'], loadProviders(file, env), String);
  const lineWhenAll = async (kind: ProviderError['kind'], status?: number) => {
    const script = Object.fromEntries(chain.flatMap((at) => at.provider.keys.map((key) => [`${at.ref}#${key.value}`, fail(kind, undefined, status)])));
    const error = await chainOf(chain, script, [])
      .complete(request)
      .catch((caught: unknown) => caught as ProviderError);
    return describeProviderFailure(error as ProviderError);
  };
  const lead = 'Sorry, I could not answer: every model of the chain failed (pool/fast, backup/steady, openai/gpt';

  it.each([
    [
      'auth',
      401,
      `${lead}; the last with HTTP 401). The model provider refused the credentials; check POOL_KEY_A, POOL_KEY_B (provider pool of HERALD_PROVIDERS_FILE), BACKUP_KEY (provider backup of HERALD_PROVIDERS_FILE) and OPENAI_API_KEY.`,
    ],
    [
      'connection',
      undefined,
      `${lead}). Herald could not reach the model provider; check the network and pool.base_url of HERALD_PROVIDERS_FILE, backup.base_url of HERALD_PROVIDERS_FILE and OPENAI_BASE_URL.`,
    ],
    ['server', 503, `${lead}; the last with HTTP 503). The model provider is having trouble; try again in a moment.`],
  ] as const)('names the configured providers and variables on %s, in one line and without a key', async (kind, status, line) => {
    const text = await lineWhenAll(kind, status);
    expect(text).toBe(line);
    expect(text).not.toMatch(/sk-|\n/);
  });

  it('names the one model a bad request was refused by, and a single key by its variable', async () => {
    const [pool] = chain;
    const refused = await chainOf([pool!], { 'pool/fast#sk-pool-a': fail('bad_request', undefined, 400) }, [])
      .complete(request)
      .catch((caught: unknown) => caught);
    expect(describeProviderFailure(refused as ProviderError)).toBe(
      'Sorry, I could not answer: the model call failed (HTTP 400). The model provider rejected the request; check the model name pool/fast.',
    );
    const openai = chain.slice(2);
    const denied = await chainOf(openai, { 'openai/gpt#sk-openai': fail('auth', undefined, 401) }, [])
      .complete(request)
      .catch((caught: unknown) => caught);
    expect(describeProviderFailure(denied as ProviderError)).toBe('Sorry, I could not answer: the model call failed (HTTP 401). The model provider refused the credentials; check OPENAI_API_KEY.');
  });
});
