import { setFlagsFromString } from 'node:v8';
import { runInNewContext } from 'node:vm';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { OpenAIProvider, runToolLoop } from '@herald/agent';
import type { CompletionRequest, Provider } from '@herald/agent';
import { startFakeOpenAI } from '../../../test/support/fake-llm.ts';
import type { FakeLLM } from '../../../test/support/fake-llm.ts';

// The leak the soak of 2026-12-06 found: a worker's model calls' signals were kept for the life of
// the process. The OpenAI SDK adds an 'abort' listener to the request's signal and never removes
// it; Node keeps a composite signal (AbortSignal.any) alive while it has a listener and no source
// has aborted, and the worker's own signals never abort. The call's signal must be collectable.

setFlagsFromString('--expose_gc');
const gc = runInNewContext('gc') as () => void;

describe('the tool loop lets go of each model call signal', () => {
  let fake: FakeLLM;
  beforeAll(async () => {
    fake = await startFakeOpenAI({ retainRequests: 0 });
  });
  afterAll(() => fake.close());

  it('keeps no call signal once the calls are over, though the worker signal lives on', async () => {
    const sdk = new OpenAIProvider({ model: 'gpt-test', apiKey: 'sk-test', baseURL: fake.url });
    const seen: WeakRef<AbortSignal>[] = [];
    // The real SDK against the fake's wire protocol; this only notes the signal each call got.
    const provider: Provider = { name: sdk.name, model: sdk.model, complete: (request: CompletionRequest) => (seen.push(new WeakRef(request.signal!)), sdk.complete(request)) };
    const worker = new AbortController();
    for (let turn = 0; turn < 20; turn++) {
      const result = await runToolLoop({
        provider,
        sessionId: `s-${turn}`,
        system: 'You are a test.',
        history: [{ role: 'user', content: `hello ${turn}` }],
        tools: { definitions: [], execute: () => Promise.reject(new Error('no tools')), isReplaySafe: () => false },
        maxIterations: 2,
        retry: { maxRetries: 0, baseMs: 1 },
        signal: worker.signal,
        hooks: { onToolStep: async () => undefined, onToolResults: async () => undefined },
        modelSignal: () => new AbortController().signal,
      });
      expect(result.outcome).toBe('answered');
    }
    expect(seen).toHaveLength(20);
    for (let round = 0; round < 5 && seen.some((ref) => ref.deref() !== undefined); round++) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      gc();
    }
    expect(seen.filter((ref) => ref.deref() !== undefined)).toHaveLength(0);
    expect(worker.signal.aborted).toBe(false);
  });
});
