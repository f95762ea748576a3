import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { join } from 'node:path';
import { tmpdir } from 'node:os';
import { startFakeOpenAI } from './support/fake-llm.ts';
import type { FakeLLM } from './support/fake-llm.ts';
import { startFakeTelegram } from './support/fake-telegram.ts';
import type { FakeTelegram } from './support/fake-telegram.ts';
import { startOtlpReceiver } from './support/otlp-receiver.ts';
import type { OtlpReceiver, ReceivedSpan } from './support/otlp-receiver.ts';
import { createTestDatabase, uniquePrefix } from './support/test-database.ts';
import type { TestDatabase } from './support/test-database.ts';
import { spawnHerald, waitFor } from './support/stack.ts';
import type { HeraldProcess } from './support/stack.ts';

const CHAIN = ['herald.ingress.accept', 'herald.worker.wake', 'herald.turn', 'herald.model.call', 'herald.tool.call', 'herald.delivery'];

describe('traces from ingress to delivery', () => {
  let receiver: OtlpReceiver;
  let llm: FakeLLM;
  let telegram: FakeTelegram;
  let database: TestDatabase;
  let ingress: HeraldProcess;
  let worker: HeraldProcess;

  beforeAll(async () => {
    receiver = await startOtlpReceiver();
    llm = await startFakeOpenAI({
      handler: (request) =>
        request.messages.at(-1)?.role === 'user' ? { toolCalls: [{ name: 'todo', arguments: { todos: [{ id: '1', content: 'tea', status: 'pending' }] } }] } : { text: 'planned' },
    });
    telegram = await startFakeTelegram();
    database = await createTestDatabase();
    const env = {
      DATABASE_URL: database.url,
      REDIS_URL: 'redis://127.0.0.1:6379',
      PORT: '0',
      HERALD_METRICS_PORT: '0',
      HERALD_API_TOKEN: 'trace-token-123456',
      HERALD_QUEUE_PREFIX: uniquePrefix(),
      HERALD_DB_POOL_SIZE: '4',
      HERALD_WORKSPACE_ROOT: join(tmpdir(), `herald-ws-${database.name}`),
      HERALD_MODEL: 'openai/gpt-test',
      OPENAI_BASE_URL: llm.url,
      OPENAI_API_KEY: 'sk-test',
      TELEGRAM_BOT_TOKEN: telegram.token,
      TELEGRAM_MODE: 'polling',
      TELEGRAM_ALLOWED_USERS: '*',
      TELEGRAM_API_ROOT: telegram.apiRoot,
      TELEGRAM_POLL_TIMEOUT_SECONDS: '1',
      HERALD_DELIVERY_POLL_MS: '100',
      OTEL_EXPORTER_OTLP_ENDPOINT: receiver.url,
      LOG_LEVEL: 'info',
    };
    ingress = spawnHerald('ingress', env);
    worker = spawnHerald('worker', env);
    await waitFor(async () => ingress.output().includes('ingress listening'), { timeoutMs: 60_000, what: 'ingress start' });
    await waitFor(async () => worker.output().includes('worker started'), { timeoutMs: 60_000, what: 'worker start' });
  }, 180_000);

  afterAll(async () => {
    ingress?.child.kill('SIGKILL');
    worker?.child.kill('SIGKILL');
    await database?.drop();
    await telegram?.close();
    await llm?.close();
    await receiver?.close();
  });

  it('carries one trace id from the Telegram message through the queue, the turn and its calls, to the delivery', async () => {
    telegram.userMessage({ chatId: 81, from: { id: 81 }, text: 'plan my evening' });
    await waitFor(async () => telegram.botMessages(81).length > 0, { timeoutMs: 60_000, what: 'the reply' });
    const spans = await waitFor(
      async () => {
        const root = receiver.spans.find((span) => span.name === 'herald.ingress.accept');
        const trace = receiver.spans.filter((span) => span.traceId === root?.traceId);
        return CHAIN.every((name) => trace.some((span) => span.name === name)) ? trace : undefined;
      },
      { timeoutMs: 30_000, what: 'every span of the chain' },
    );
    const one = (name: string): ReceivedSpan => spans.find((span) => span.name === name)!;
    const [accept, wake, turn, delivery] = ['herald.ingress.accept', 'herald.worker.wake', 'herald.turn', 'herald.delivery'].map(one);
    expect(accept!.service).toBe('herald-ingress');
    expect(accept!.parentSpanId).toBe('');
    // Across processes: the worker continues the traceparent carried in the job data.
    expect(wake!.service).toBe('herald-worker');
    expect(wake!.parentSpanId).toBe(accept!.spanId);
    expect(turn!.parentSpanId).toBe(wake!.spanId);
    const calls = spans.filter((span) => span.name === 'herald.model.call' || span.name === 'herald.tool.call');
    expect(calls.map((span) => span.name).sort()).toEqual(['herald.model.call', 'herald.model.call', 'herald.tool.call']);
    for (const call of calls) expect(call.parentSpanId).toBe(turn!.spanId);
    expect(spans.find((span) => span.name === 'herald.tool.call')!.attributes['herald.tool.outcome']).toBe('ok');
    // Across the outbox: the reply's row carried the turn's traceparent to its delivery.
    expect(delivery!.parentSpanId).toBe(turn!.spanId);
    expect(delivery!.attributes['herald.platform']).toBe('telegram');

    // Log lines written inside the spans carry the trace id.
    const delivered = worker
      .output()
      .split('\n')
      .filter((line) => line.startsWith('{'))
      .map((line) => JSON.parse(line))
      .find((line) => line.msg === 'delivered');
    expect(delivered?.trace_id).toBe(accept!.traceId);
    expect(delivered?.span_id).toBe(delivery!.spanId);
  });
});
