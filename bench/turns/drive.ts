import { percentile } from '../machine.ts';
import type { FakeRequest } from '../../test/support/fake-llm.ts';

/** One point of the turns benchmark. */
export interface Scenario {
  workers: number;
  /** Sessions one worker process runs at once (HERALD_WORKER_CONCURRENCY). */
  concurrency: number;
  clients: number;
  modelLatencyMs: number;
  durationMs: number;
}

export interface ScenarioResult extends Scenario {
  turns: number;
  turnsPerSecond: number;
  latencyP50: number;
  latencyP99: number;
  overheadP50: number;
  overheadP99: number;
  leaseMsPerTurn: number;
}

/**
 * Closed-loop clients: each owns a chat and sends its next message when the previous one is
 * answered (`?wait`), until the deadline. Returns each answered turn's wall time.
 */
export async function driveClients(url: string, token: string, scenario: Scenario, runId: string): Promise<{ latencies: number[]; elapsedMs: number }> {
  const latencies: number[] = [];
  const started = performance.now();
  const deadline = started + scenario.durationMs;
  const client = async (index: number) => {
    let n = 0;
    while (performance.now() < deadline) {
      const t0 = performance.now();
      const response = await fetch(`${url}/v1/messages?wait=60`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ chat_id: `${runId}-${index}`, user_id: `u${index}`, text: `message ${n++}` }),
      });
      const body = (await response.json()) as { reply?: { text: string } };
      if (response.status !== 200 || !body.reply) throw new Error(`unexpected answer ${response.status}: ${JSON.stringify(body).slice(0, 200)}`);
      latencies.push(performance.now() - t0);
    }
  };
  await Promise.all(Array.from({ length: scenario.clients }, (_, i) => client(i)));
  return { latencies, elapsedMs: performance.now() - started };
}

/** The fake model's service times, per prompt_cache_key, in arrival order. */
export function serviceTimes(requests: FakeRequest[]): Map<string, number[]> {
  const byKey = new Map<string, number[]>();
  for (const request of requests) {
    const list = byKey.get(request.sessionKey ?? '') ?? [];
    list.push(request.serviceMs ?? 0);
    byKey.set(request.sessionKey ?? '', list);
  }
  return byKey;
}

/** The result of a point from its client latencies and per-turn overheads. */
export function scenarioResult(scenario: Scenario, drive: { latencies: number[]; elapsedMs: number }, overheads: number[], leaseMs: number[] = []): ScenarioResult {
  return {
    ...scenario,
    turns: drive.latencies.length,
    turnsPerSecond: drive.latencies.length / (drive.elapsedMs / 1000),
    latencyP50: percentile(drive.latencies, 50),
    latencyP99: percentile(drive.latencies, 99),
    overheadP50: percentile(overheads, 50),
    overheadP99: percentile(overheads, 99),
    leaseMsPerTurn: percentile(leaseMs, 50),
  };
}
