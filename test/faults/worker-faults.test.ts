import { afterEach, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { startFakeOpenAI } from '../support/fake-llm.ts';
import type { FakeLLM } from '../support/fake-llm.ts';
import { PROCESS_START_MS, spawnHerald, startStack, stopProcess, TEST_TOKEN } from '../support/stack.ts';
import type { HeraldProcess, Stack } from '../support/stack.ts';
import { waitFor } from '../support/wait.ts';
import { answeredCount, expectExactlyOnce, recordRecovery, sleep, steadyTraffic } from './fault-support.ts';

describe('faults: a worker paused, every role restarted', { timeout: 5 * PROCESS_START_MS }, () => {
  let model: FakeLLM | undefined;
  let stack: Stack | undefined;
  const extra: HeraldProcess[] = [];

  afterEach(async () => {
    for (const child of extra.splice(0)) {
      child.child.kill('SIGCONT');
      await stopProcess(child);
    }
    await stack?.stop();
    await model?.close();
    stack = undefined;
  });

  it('a worker SIGSTOPped past its lease: another worker finishes the turn once, the late writes are refused by the fence', async () => {
    let calls = 0;
    model = await startFakeOpenAI({
      handler: async (request) => {
        calls += 1;
        // The first call is the paused worker's: it answers only after the lease has long expired.
        if (calls === 1) {
          await sleep(4000);
          return { text: `late: ${request.lastUserText}` };
        }
        return { text: `echo: ${request.lastUserText}` };
      },
    });
    stack = await startStack({ model, workerProcesses: true, env: { HERALD_LEASE_TTL_MS: '1500' } });
    const running = stack;
    await Promise.all([running.startProcess('worker'), running.startProcess('worker')]);
    const sent = await running.post('/v1/messages', { chat_id: 'paused', user_id: 'u1', text: 'are you there' });
    expect(sent.status).toBe(202);
    await model.waitForCalls(sent.body.session_id);
    const lease = await running.database.db.selectFrom('session_leases').select('owner').where('session_id', '=', sent.body.session_id).executeTakeFirstOrThrow();
    const holder = running.processes().find((worker) => worker.child.pid === Number(lease.owner.split(':')[1]))!;
    holder.child.kill('SIGSTOP');
    const paused = Date.now();
    const event = await running.waitForEvent(sent.body.event_id, 60_000);
    const recovered = Date.now() - paused;
    expect(event.reply.text).toBe('echo: are you there');
    holder.child.kill('SIGCONT');
    // Resumed, it gets the late answer and tries to write it: refused, the turn abandoned.
    await waitFor(async () => holder.output().includes('lease lost; turn abandoned'), { timeoutMs: 30_000, what: 'the fence refusing the paused worker' });
    const messages = await running.database.db.selectFrom('messages').select(['role', 'content']).where('session_id', '=', sent.body.session_id).orderBy('seq').execute();
    expect(messages).toEqual([
      { role: 'user', content: 'are you there' },
      { role: 'assistant', content: 'echo: are you there' },
    ]);
    const turn = await running.database.db.selectFrom('turns').select('attempts').where('session_id', '=', sent.body.session_id).executeTakeFirstOrThrow();
    expect(turn.attempts).toBe(2);
    recordRecovery('worker-sigstop-past-lease', recovered, { leaseTtlMs: 1500 });
  });

  it('a rolling restart of every role with SIGTERM under load: every turn answered once, none waits more than 10 s', async () => {
    model = await startFakeOpenAI({ latencyMs: 100 });
    stack = await startStack({ model, workerProcesses: true, env: { HERALD_LEASE_TTL_MS: '3000' } });
    const running = stack;
    // The shipped shutdown deadline (25 s; the pods get 35 s of grace), not the test stack's 8 s:
    // on a loaded two-core runner a worker finishing its turn and closing its pools can pass 8 s,
    // which is an exit code of 1 here and nothing an operator would see.
    const env = { ...running.env, LOG_LEVEL: 'info', HERALD_SHUTDOWN_TIMEOUT_MS: '25000' };
    const start = async (role: string): Promise<{ child: HeraldProcess; url?: string }> => {
      const child = spawnHerald(role, env);
      extra.push(child);
      const ready = role === 'ingress' ? /ingress listening on (\S+)"/ : new RegExp(`(${role}) started`);
      const said = await waitFor(async () => ready.exec(child.output())?.[1], { timeoutMs: PROCESS_START_MS, what: `${role} start` });
      return { child, ...(role === 'ingress' ? { url: said.replace('0.0.0.0', '127.0.0.1') } : {}) };
    };
    const roles = ['ingress', 'ingress', 'worker', 'worker', 'scheduler', 'reviewer'];
    const live = await Promise.all(roles.map((role) => start(role)));
    const ingressUrls = () => live.filter((entry) => entry.url !== undefined && entry.child.child.exitCode === null).map((entry) => entry.url!);
    const load = { prefix: 'roll', sessions: 8, messages: 12, pauseMs: 300 };
    const traffic = steadyTraffic(ingressUrls, TEST_TOKEN, load);
    await waitFor(async () => (await answeredCount(running.database.db)) >= 10, { timeoutMs: 60_000, what: 'traffic under way' });
    const rolled = Date.now();
    for (let index = 0; index < live.length; index++) {
      const old = live[index]!;
      // The replacement first, as a rolling update does (maxSurge 1), then SIGTERM the old one.
      const fresh = await start(roles[index]!);
      live[index] = fresh;
      old.child.child.kill('SIGTERM');
      // Its own words when it did not stop cleanly: what the shutdown was waiting on, or what threw.
      expect(await old.child.exited, `${roles[index]} on SIGTERM:\n${old.child.output().slice(-4000)}`).toBe(0);
    }
    const rollMs = Date.now() - rolled;
    await traffic.sent;
    await expectExactlyOnce(running.database.db, load);
    const waits = await sql<{ ms: number }>`
      SELECT max(extract(epoch FROM (completed_at - received_at)) * 1000)::float AS ms FROM inbound_events`.execute(running.database.db);
    const longest = waits.rows[0]!.ms;
    recordRecovery('rolling-restart-sigterm', longest, { rolledRoles: roles.length, rollMs });
    expect(longest).toBeLessThan(10_000);
  });
});
