import { spawn } from 'node:child_process';
import { afterEach, describe, expect, it } from 'vitest';
import { startFakeOpenAI } from '../support/fake-llm.ts';
import type { FakeLLM } from '../support/fake-llm.ts';
import { HERALD_BIN, PROCESS_START_MS, startStack, stopProcess, TEST_TOKEN } from '../support/stack.ts';
import type { HeraldProcess, Stack } from '../support/stack.ts';
import { waitFor } from '../support/wait.ts';
import { answeredCount, expectExactlyOnce, recordRecovery, sleep, startOwnPostgres, startOwnRedis, steadyTraffic } from './fault-support.ts';
import type { OwnService } from './fault-support.ts';
import { createNetns } from './network.ts';
import type { Netns } from './network.ts';

/** A `herald <role>` inside the namespace, its services reached on the host's end of the link. */
function heraldIn(netns: Netns, role: string, env: Record<string, string>): HeraldProcess {
  const [command, ...prefix] = netns.exec;
  const child = spawn(command!, [...prefix, process.execPath, HERALD_BIN, role], { env: { ...process.env, HERALD_METRICS_PORT: '0', ...env, LOG_LEVEL: 'info' }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? -1)));
  return { child, output: () => output, exited };
}

const onLink = (url: string, address: string) => url.replace('127.0.0.1', address);

describe.skipIf(process.getuid?.() !== 0)('faults: network partitions (ip netns, veth, link down)', { timeout: 5 * PROCESS_START_MS }, () => {
  let netns: Netns | undefined;
  let model: FakeLLM | undefined;
  let stack: Stack | undefined;
  const owned: OwnService[] = [];
  const inside: HeraldProcess[] = [];

  afterEach(async () => {
    netns?.heal();
    for (const child of inside.splice(0)) await stopProcess(child);
    await stack?.stop();
    await model?.close();
    for (const service of owned.splice(0)) await service.stop();
    netns?.remove();
    stack = undefined;
    netns = undefined;
  });

  async function setUp(): Promise<{ running: Stack; env: Record<string, string> }> {
    netns = createNetns();
    const postgres = await startOwnPostgres(`127.0.0.1,${netns.hostAddress}`, netns.network);
    const redis = await startOwnRedis(`127.0.0.1 ${netns.hostAddress}`);
    owned.push(postgres, redis);
    model = await startFakeOpenAI({ latencyMs: 80, host: '0.0.0.0' });
    stack = await startStack({ model, workerProcesses: true, adminUrl: postgres.url, env: { REDIS_URL: redis.url, HERALD_LEASE_TTL_MS: '2000', HERALD_TURN_MAX_ATTEMPTS: '20' } });
    const address = netns.hostAddress;
    const env = {
      ...stack.env,
      DATABASE_URL: onLink(stack.env.DATABASE_URL!, address),
      REDIS_URL: onLink(stack.env.REDIS_URL!, address),
      OPENAI_BASE_URL: model.url.replace(/\/\/[^/:]+:/, `//${address}:`),
    };
    return { running: stack, env };
  }

  it('a worker cut off from Postgres and Redis: the other worker takes its sessions, each message answered once', async () => {
    const { running, env } = await setUp();
    const cutOff = heraldIn(netns!, 'worker', env);
    inside.push(cutOff);
    await waitFor(async () => cutOff.output().includes('worker started'), { timeoutMs: 30_000, what: 'the worker in the namespace' }).catch((error: Error) => {
      throw new Error(`${error.message}: ${cutOff.output().slice(-1500)}`);
    });
    await running.startProcess('worker');
    const load = { prefix: 'part-w', sessions: 6, messages: 8, pauseMs: 300 };
    const traffic = steadyTraffic(() => [running.url], TEST_TOKEN, load);
    await waitFor(async () => (await answeredCount(running.database.db)) >= 10, { timeoutMs: 60_000, what: 'traffic under way' });
    netns!.partition();
    const cut = Date.now();
    // Answers keep coming while it is cut off: the other worker took over.
    const before = await answeredCount(running.database.db);
    await waitFor(async () => (await answeredCount(running.database.db)) >= before + 5, { timeoutMs: 60_000, what: 'answers during the partition' });
    const recovered = Date.now() - cut;
    await sleep(4000);
    netns!.heal();
    await traffic.sent;
    await expectExactlyOnce(running.database.db, load);
    expect(cutOff.child.exitCode).toBeNull();
    recordRecovery('partition-worker', recovered, { leaseTtlMs: 2000 });
  });

  it('an ingress cut off from the rest: clients retry on the other ingress, nothing lost or doubled, and it serves again once healed', async () => {
    const { running, env } = await setUp();
    const ingress = heraldIn(netns!, 'ingress', { ...env, PORT: '0', HOST: '0.0.0.0' });
    inside.push(ingress);
    const said = await waitFor(async () => /ingress listening on http:\/\/[^:]+:(\d+)/.exec(ingress.output())?.[1], { timeoutMs: PROCESS_START_MS, what: 'the ingress in the namespace' });
    // The address inside the namespace, seen from the host across the link.
    const cutUrl = `http://${netns!.hostAddress.replace(/\d+$/, (last) => String(Number(last) + 1))}:${said}`;
    await running.startProcess('worker');
    const load = { prefix: 'part-i', sessions: 6, messages: 8, pauseMs: 300 };
    const traffic = steadyTraffic(() => [cutUrl, running.url], TEST_TOKEN, load);
    await waitFor(async () => (await answeredCount(running.database.db)) >= 10, { timeoutMs: 60_000, what: 'traffic under way' });
    netns!.partition();
    const cut = Date.now();
    const before = await answeredCount(running.database.db);
    await waitFor(async () => (await answeredCount(running.database.db)) >= before + 5, { timeoutMs: 60_000, what: 'answers through the other ingress' });
    const recovered = Date.now() - cut;
    await sleep(3000);
    netns!.heal();
    await traffic.sent;
    await expectExactlyOnce(running.database.db, load);
    const ready = await waitFor(async () => ((await fetch(`${cutUrl}/readyz`)).status === 200 ? true : undefined), { timeoutMs: 30_000, what: 'the healed ingress ready' });
    expect(ready).toBe(true);
    recordRecovery('partition-ingress', recovered);
  });
});
