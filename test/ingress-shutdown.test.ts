import { afterAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI } from './support/fake-llm.ts';
import type { FakeLLM } from './support/fake-llm.ts';
import { PROCESS_START_MS, spawnHerald, startStack, stopProcess, TEST_TOKEN } from './support/stack.ts';
import type { HeraldProcess, Stack } from './support/stack.ts';
import { waitFor } from './support/wait.ts';

// A rolling update SIGTERMs an ingress while a keep-alive client (a load balancer, a proxy) has a
// request running on it. The request must be answered and the ingress must then stop on its own,
// not sit on the idle connection until the shutdown deadline and exit 1.
describe('an ingress stopping with a request running on a keep-alive connection', { timeout: 2 * PROCESS_START_MS }, () => {
  let model: FakeLLM;
  let stack: Stack;
  let ingress: HeraldProcess | undefined;
  afterAll(async () => {
    if (ingress) await stopProcess(ingress);
    await stack?.stop();
    await model?.close();
  });

  it('answers the running request, closes its connection and exits 0 well before the deadline', async () => {
    model = await startFakeOpenAI({ latencyMs: 1500 });
    stack = await startStack({ model });
    ingress = spawnHerald('ingress', { ...stack.env, LOG_LEVEL: 'info', HERALD_SHUTDOWN_TIMEOUT_MS: '20000' });
    const started = ingress;
    const url = await waitFor(async () => /ingress listening on (\S+)"/.exec(started.output())?.[1]?.replace('0.0.0.0', '127.0.0.1'), {
      timeoutMs: PROCESS_START_MS,
      what: 'ingress start',
    });
    const headers = { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/json' };
    // fetch keeps the connection alive after the answer, as a proxy would.
    const warm = await fetch(`${url}/healthz`);
    await warm.arrayBuffer();
    const answer = fetch(`${url}/v1/messages?wait=10`, { method: 'POST', headers, body: JSON.stringify({ chat_id: 'roll', user_id: 'u1', text: 'still there?' }) });
    await waitFor(async () => model.requests.length > 0 || undefined, { timeoutMs: 30_000, what: 'the turn reaching the model' });
    started.child.kill('SIGTERM');
    const response = await answer;
    expect(response.status).toBe(200);
    expect(((await response.json()) as { reply?: { text?: string } }).reply?.text).toBe('echo: still there?');
    // Before: the shutdown waited on 'http server' until its 20 s deadline and exited 1.
    expect(await started.exited, started.output().slice(-2000)).toBe(0);
  });
});
