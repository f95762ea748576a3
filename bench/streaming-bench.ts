import { writeFile, mkdir } from 'node:fs/promises';
import { loadavg } from 'node:os';
import { startFakeOpenAI } from '../test/support/fake-llm.ts';
import { startStack, TEST_TOKEN } from '../test/support/stack.ts';
import { readSse } from '../test/support/sse-client.ts';
import { startFakeTelegram } from '../test/support/fake-telegram.ts';
import type { FakeTelegram } from '../test/support/fake-telegram.ts';
import type { FakeLLM } from '../test/support/fake-llm.ts';
import { telegramChunks } from '@herald/platforms/telegram';
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
  /** Chats (bench/streaming-bench.ts runTelegramTurns): the same answer to a person on the fake Telegram. */
  telegram?: TelegramStreamingResult;
  target: string;
  load: string;
  machine: string;
}

export interface TelegramStreamingResult {
  turns: number;
  /** Model wrote its first piece -> the fake Bot API received the sendMessage/editMessageText carrying it, ms. */
  firstDeltaMs: { p50: number; p95: number; max: number };
  /** The person's message queued for getUpdates -> the first draft in the chat. */
  firstVisibleMs: { p50: number; p95: number };
  /** The person's message queued -> the committed reply in the chat (the draft edited into it). */
  replyMs: { p50: number; p95: number };
  /** The same turns with HERALD_STREAMING_TELEGRAM=off: message queued -> the reply sent whole. */
  wholeReplyMs: { p50: number; p95: number };
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
  const telegram = await runTelegramStreaming(progress, turns);
  return {
    turns: firstDelta.length,
    chunkMs: CHUNK_MS,
    firstDeltaMs: summary(firstDelta),
    streamedFirstMs: summary(streamedFirst),
    streamedDoneMs: summary(streamedDone),
    wholeReplyMs: summary(whole),
    target: 'first delta p95 <= 150 ms after the model sends it (one client, API and Telegram)',
    load: `load average ${loadavg()
      .map((n) => n.toFixed(2))
      .join(' ')}`,
    machine: machineLine(),
    telegram,
  };
}

interface TelegramTurn {
  /** Model's first piece -> the Bot API call carrying it; undefined when the turn was not streamed. */
  firstDelta: number | undefined;
  firstVisible: number;
  reply: number;
}

/** One turn in a fresh DM: when the first piece and the reply reached the fake Bot API. */
async function telegramTurn(fake: FakeLLM, telegram: FakeTelegram, chatId: number): Promise<TelegramTurn> {
  const queued = performance.now();
  telegram.userMessage({ chatId, from: { id: chatId }, text: `turn ${chatId}` });
  const expected = telegramChunks(ANSWER)[0]!.html;
  const calls = () => telegram.calls.filter((call) => (call.method === 'sendMessage' || call.method === 'editMessageText') && String(call.body.chat_id) === String(chatId));
  for (let waited = 0; !calls().some((call) => call.body.text === expected); waited += 5) {
    if (waited > 30_000) throw new Error(`no reply in chat ${chatId}`);
    await new Promise((resolve) => setTimeout(resolve, 5));
  }
  const sent = calls();
  const modelFirst = fake.requests.at(-1)?.chunksSent?.[0];
  const carrying = modelFirst === undefined ? undefined : sent.find((call) => String(call.body.text).includes(modelFirst.text.trim()));
  return {
    firstDelta: carrying === undefined || modelFirst === undefined ? undefined : carrying.at - modelFirst.at,
    firstVisible: sent[0]!.at - queued,
    reply: sent.find((call) => call.body.text === expected)!.at - queued,
  };
}

/** One client on the fake Telegram: streamed turns, then the same turns with the platform's streaming off. */
async function runTelegramStreaming(progress: (message: string) => void, turns: number): Promise<TelegramStreamingResult> {
  const streamed: TelegramTurn[] = [];
  const whole: number[] = [];
  for (const mode of ['on', 'off'] as const) {
    const fake = await startFakeOpenAI({ chunkDelayMs: CHUNK_MS });
    fake.handler = () => ({ text: ANSWER });
    const telegram = await startFakeTelegram();
    const stack = await startStack({ model: fake, env: { ...telegram.env, TELEGRAM_ALLOWED_USERS: '*', HERALD_DELIVERY_POLL_MS: '100', HERALD_STREAMING_TELEGRAM: mode } });
    try {
      for (let i = 0; i < turns + 5; i++) {
        const turn = await telegramTurn(fake, telegram, 1000 + i);
        // The first five warm the process up and are not counted.
        if (i < 5) continue;
        if (mode === 'on') streamed.push(turn);
        else whole.push(turn.reply);
        if (i % 10 === 0) progress(`telegram, streaming ${mode}: ${i - 4} of ${turns}`);
      }
    } finally {
      await stack.stop();
      await telegram.close();
    }
  }
  const firstDelta = streamed.flatMap((turn) => (turn.firstDelta === undefined ? [] : [turn.firstDelta]));
  return {
    turns: firstDelta.length,
    firstDeltaMs: summary(firstDelta),
    firstVisibleMs: summary(streamed.map((turn) => turn.firstVisible)),
    replyMs: summary(streamed.map((turn) => turn.reply)),
    wholeReplyMs: summary(whole),
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
  const telegram = result.telegram;
  if (!telegram) return;
  console.log('\n## Live turns in a chat: the fake Telegram (one person)\n');
  console.log(
    'The same answer to a person on the fake Bot API (polling). "model -> Bot API" runs from the fake model writing its first piece ' +
      'to the fake Telegram receiving the sendMessage or editMessageText that carries it; the whole reply is the same turns with HERALD_STREAMING_TELEGRAM=off.\n',
  );
  console.log(
    table(
      ['figure', 'turns', 'p50 ms', 'p95 ms', 'max ms'],
      [
        ['first delta, model -> Bot API', telegram.turns, f(telegram.firstDeltaMs.p50), f(telegram.firstDeltaMs.p95), f(telegram.firstDeltaMs.max)],
        ['streamed: message -> first draft', telegram.turns, f(telegram.firstVisibleMs.p50), f(telegram.firstVisibleMs.p95), '-'],
        ['streamed: message -> committed reply', telegram.turns, f(telegram.replyMs.p50), f(telegram.replyMs.p95), '-'],
        ['not streamed: message -> reply', telegram.turns, f(telegram.wholeReplyMs.p50), f(telegram.wholeReplyMs.p95), '-'],
      ],
    ),
  );
}

export async function writeStreamingJson(result: StreamingBenchResult): Promise<void> {
  await mkdir(new URL('./results/', import.meta.url), { recursive: true });
  await writeFile(STREAMING_RESULTS_FILE, `${JSON.stringify(result, null, 2)}\n`);
}
