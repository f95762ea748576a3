import { percentile } from '../machine.ts';
import type { FakeHandler, FakeRequest } from '../../test/support/fake-llm.ts';

/** One point of the turns benchmark. */
export interface Scenario {
  workers: number;
  /** Sessions one worker process runs at once (HERALD_WORKER_CONCURRENCY). */
  concurrency: number;
  clients: number;
  modelLatencyMs: number;
  durationMs: number;
  /** Model steps per turn (issue 41 point 5): steps - 1 tool calls of `todo`, then the answer; 1 when unset. */
  steps?: number;
  /** Stop each client after this many turns, before the deadline (the long-session points). */
  turnsPerClient?: number;
  /** The clients' chats are `<chatPrefix>-<index>` across runs (sessions seeded beforehand) instead of new ones per run. */
  chatPrefix?: string;
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
    while (performance.now() < deadline && n < (scenario.turnsPerClient ?? Number.POSITIVE_INFINITY)) {
      const t0 = performance.now();
      const response = await fetch(`${url}/v1/messages?wait=60`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
        body: JSON.stringify({ chat_id: `${scenario.chatPrefix ?? runId}-${index}`, user_id: `u${index}`, text: `message ${n++}` }),
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

/** The model's time within a turn of `steps` model calls: the turn's calls are consecutive in its session's list. */
export function turnServiceMs(times: number[] | undefined, turn: number, steps = 1): number {
  return (times ?? []).slice(turn * steps, (turn + 1) * steps).reduce((a, b) => a + b, 0);
}

/**
 * A realistic turn's model (issue 41 point 5): while fewer than `steps - 1` tool results follow the
 * last user message, one `todo` call that merges an item (a database write under the fence); then
 * the answer. Works for Herald's requests and the reference pipeline's alike.
 */
export function toolStepsHandler(steps: number): FakeHandler {
  return (request) => {
    const lastUser = request.messages.map((m) => m.role).lastIndexOf('user');
    const done = request.messages.slice(lastUser + 1).filter((m) => m.role === 'tool').length;
    if (done >= steps - 1) return { text: `done: ${request.lastUserText}` };
    return { toolCalls: [{ name: 'todo', arguments: { todos: [{ id: String(done + 1), content: `step ${done + 1} of ${request.lastUserText}`, status: 'in_progress' }], merge: true } }] };
  };
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
