import { writeFile, mkdir } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { startFakeOpenAI } from '../test/support/fake-llm.ts';
import { startStack, TEST_TOKEN } from '../test/support/stack.ts';
import { readSse } from '../test/support/sse-client.ts';
import { machineLine, percentile, table } from './machine.ts';

/** bench/results/streaming.json: time to first streamed delta beside the time to a whole reply. */
export const STREAMING_RESULTS_FILE = new URL('./results/streaming.json', import.meta.url);

const ANSWER = 'The deploy at nine raised p99 latency on checkout; roll back to the last green build, then look at the connection pool.';
/** The streaming fake model writes a piece of text this often (about a fast model's pace). */
const CHUNK_MS = 20;

export interface StreamingBenchResult {
  turns: number;
  chunkMs: number;
  /** Model wrote its first piece -> the API client parsed the first delta event, ms. */
  firstDeltaMs: { p50: number; p95: number; max: number };
  /** The same turn streamed: request sent -> first delta, and -> done. */
  streamedFirstMs: { p50: number; p95: number };
  streamedDoneMs: { p50: number; p95: number };
  /** The same turn without a stream (`?wait`), request sent -> reply. */
  wholeReplyMs: { p50: number; p95: number };
  target: string;
  load: string;
  machine: string;
}

const summary = (values: number[]) => ({ p50: percentile(values, 50), p95: percentile(values, 95), max: Math.max(...values) });

/** One client, turns one after another: streamed over SSE, then the same turns waited for whole. */
export async function runStreamingBench(progress: (message: string) => void, turns = Number(process.env.BENCH_STREAM_TURNS ?? 60)): Promise<StreamingBenchResult> {
  const fake = await startFakeOpenAI({ chunkDelayMs: CHUNK_MS });
  fake.handler = () => ({ text: ANSWER });
  const stack = await startStack({ model: fake });
  const firstDelta: number[] = [];
  const streamedFirst: number[] = [];
  const streamedDone: number[] = [];
  const whole: number[] = [];
  try {
    for (let i = 0; i < turns + 5; i++) {
      const sent = performance.now();
      const response = await fetch(`${stack.url}/v1/messages`, {
        method: 'POST',
        headers: { authorization: `Bearer ${TEST_TOKEN}`, 'content-type': 'application/json', accept: 'text/event-stream' },
        body: JSON.stringify({ chat_id: `bench-stream-${i % 4}`, user_id: 'bench', text: `turn ${i}` }),
      });
      let first: number | undefined;
      for await (const event of readSse(response)) {
        if (event.event === 'delta' && first === undefined) first = event.at;
        if (event.event === 'done' || event.event === 'error') break;
      }
      const done = performance.now();
      const modelFirst = fake.requests.at(-1)?.chunksSent?.[0]?.at;
      // The first five warm the process up and are not counted.
      if (i < 5 || first === undefined || modelFirst === undefined) continue;
      firstDelta.push(first - modelFirst);
      streamedFirst.push(first - sent);
      streamedDone.push(done - sent);
      if (i % 10 === 0) progress(`streamed ${i - 4} of ${turns}`);
    }
    for (let i = 0; i < turns; i++) {
      const sent = performance.now();
      const response = await stack.post('/v1/messages?wait=30', { chat_id: `bench-whole-${i % 4}`, user_id: 'bench', text: `turn ${i}` });
      if (response.status !== 200) throw new Error(`whole reply: ${response.status}`);
      whole.push(performance.now() - sent);
    }
  } finally {
    await stack.stop();
  }
  return {
    turns: firstDelta.length,
    chunkMs: CHUNK_MS,
    firstDeltaMs: summary(firstDelta),
    streamedFirstMs: summary(streamedFirst),
    streamedDoneMs: summary(streamedDone),
    wholeReplyMs: summary(whole),
    target: 'first delta p95 <= 150 ms after the model sends it (one client)',
    load: `load average ${loadavg().map((n) => n.toFixed(2)).join(' ')}`,
    machine: machineLine(),
  };
}

export function printStreamingBench(result: StreamingBenchResult): void {
  const f = (n: number) => n.toFixed(1);
  console.log('\n## Live turns: time to the first streamed delta (API, one client)\n');
  console.log(
    `A streaming fake model writing a piece every ${result.chunkMs} ms; the client reads POST /v1/messages as server-sent events ` +
      `(bench/streaming-bench.ts). "model -> client" runs from the fake writing its first piece to the client parsing the first delta. ${result.load}.\n`,
  );
  console.log(
    table(
      ['figure', 'turns', 'p50 ms', 'p95 ms', 'max ms'],
      [
        ['first delta, model -> client', result.turns, f(result.firstDeltaMs.p50), f(result.firstDeltaMs.p95), f(result.firstDeltaMs.max)],
        ['streamed: request -> first delta', result.turns, f(result.streamedFirstMs.p50), f(result.streamedFirstMs.p95), '-'],
        ['streamed: request -> done', result.turns, f(result.streamedDoneMs.p50), f(result.streamedDoneMs.p95), '-'],
        ['not streamed: request -> reply (?wait)', result.turns, f(result.wholeReplyMs.p50), f(result.wholeReplyMs.p95), '-'],
      ],
    ),
  );
  console.log(`\nTarget: ${result.target}.`);
}

export async function writeStreamingJson(result: StreamingBenchResult): Promise<void> {
  await mkdir(new URL('./results/', import.meta.url), { recursive: true });
  await writeFile(STREAMING_RESULTS_FILE, `${JSON.stringify(result, null, 2)}\n`);
}
