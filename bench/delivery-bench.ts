import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import PgBoss from 'pg-boss';
import { silentLogger } from '@herald/core';
import { DeliveryConsumer, enqueueOutbound, listenForOutbox } from '@herald/delivery';
import type { DeliveryProgress, OutboundDelivery, OutboundSender } from '@herald/delivery';
import { createDb, withDefaultUser } from '@herald/db';
import type { Db, InFlightPart } from '@herald/db';
import { JobRuntime, prepareJobs, sendJob } from '@herald/jobs';
import type { QueueSpec } from '@herald/jobs';
import { TelegramSender } from '@herald/platforms/telegram';
import { startFakeTelegram } from '../test/support/fake-telegram.ts';
import type { FakeTelegram } from '../test/support/fake-telegram.ts';
import { createTestDatabase } from '../test/support/test-database.ts';
import { waitFor } from '../test/support/stack.ts';
import { percentile } from './machine.ts';

/**
 * Delivery latency: a reply committed (the transaction that writes it returned) to the fake
 * Telegram having confirmed it (the sender's call resolved), for three ways of getting the reply
 * to the sender, at a few open-loop send rates over 16 chats:
 * - outbox: today's path, an outbox row plus pg_notify in the reply's transaction, the
 *   DeliveryConsumer woken by LISTEN (polling every 1 s otherwise, the default);
 * - pg-boss work(): a pg-boss job in the reply's transaction, consumed by pg-boss's own polling
 *   workers at its shortest interval (0.5 s);
 * - pg-boss + NOTIFY: the same job plus pg_notify, consumed by Herald's JobConsumer woken by the
 *   same LISTEN connection (something pg-boss 10 does not do by itself).
 * The pg-boss paths keep the parts' progress in memory and no per-chat order, so they do less
 * work than the outbox; that only flatters them.
 */

export interface DeliveryLatency {
  path: string;
  rate: number;
  messages: number;
  p50: number;
  p99: number;
  max: number;
}

const CHATS = 16;
const QUEUE: QueueSpec = { name: 'bench-delivery', retryLimit: 3, retryDelaySeconds: 1, retryBackoff: true, expireInSeconds: 60, retentionMinutes: 60 };

interface Reply {
  key: string;
  chatId: string;
  text: string;
}

/** Records when each reply reached the platform. */
class Clock {
  readonly committed = new Map<string, number>();
  readonly delivered = new Map<string, number>();
  latencies(): number[] {
    return [...this.delivered].map(([key, at]) => at - (this.committed.get(key) ?? at));
  }
}

function timedSender(inner: OutboundSender, clock: Clock): OutboundSender {
  return {
    async send(item, signal) {
      const receipt = await inner.send(item, signal);
      clock.delivered.set(item.idempotencyKey, performance.now());
      return receipt;
    },
  };
}

/** Progress kept in memory: the pg-boss paths have no outbox row to record parts in. */
function memoryProgress(): DeliveryProgress {
  const partsSent: string[] = [];
  let inFlight: InFlightPart | null = null;
  return {
    get partsSent() {
      return partsSent;
    },
    get inFlight() {
      return inFlight;
    },
    async beginPart(part, anchor) {
      inFlight = { part, marker: randomUUID(), anchor };
      return inFlight;
    },
    async partSent(_part, messageId) {
      partsSent.push(messageId);
      inFlight = null;
    },
    async clearInFlight() {
      inFlight = null;
    },
    async recentChatMessageIds() {
      return [];
    },
  };
}

function delivery(reply: Reply): OutboundDelivery {
  return {
    id: reply.key,
    idempotencyKey: reply.key,
    drafts: [],
    platform: 'telegram',
    target: { chatId: reply.chatId, chatType: 'dm' },
    text: reply.text,
    sessionId: null,
    source: 'bench',
    attempts: 1,
    progress: memoryProgress(),
  };
}

/** Sends `count` replies at `rate` per second (open loop), each committed through `commit`. */
async function drive(rate: number, count: number, run: string, clock: Clock, commit: (reply: Reply) => Promise<void>): Promise<void> {
  const start = performance.now();
  const inFlight: Promise<void>[] = [];
  for (let i = 0; i < count; i++) {
    const wait = start + (i * 1000) / rate - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    const reply = { key: `${run}:${i}`, chatId: String(1000 + (i % CHATS)), text: `reply ${i} of ${run}` };
    inFlight.push(commit(reply).then(() => void clock.committed.set(reply.key, performance.now())));
  }
  await Promise.all(inFlight);
  await waitFor(async () => clock.delivered.size >= count, { timeoutMs: 120_000, intervalMs: 20, what: `${run} delivered` });
}

function summary(path: string, rate: number, clock: Clock): DeliveryLatency {
  const values = clock.latencies();
  return { path, rate, messages: values.length, p50: percentile(values, 50), p99: percentile(values, 99), max: Math.max(...values) };
}

async function viaOutbox(db: Db, url: string, sender: OutboundSender, rate: number, count: number): Promise<DeliveryLatency> {
  const clock = new Clock();
  const consumer = new DeliveryConsumer({ db, senders: new Map([['telegram', timedSender(sender, clock)]]), logger: silentLogger });
  consumer.start();
  const stopListening = listenForOutbox(url, () => consumer.nudge(), silentLogger);
  try {
    await new Promise((resolve) => setTimeout(resolve, 300));
    await drive(rate, count, `outbox-${rate}`, clock, async (reply) => {
      await db.transaction().execute(async (trx) => {
        await enqueueOutbound(trx, { idempotencyKey: reply.key, platform: 'telegram', target: { chatId: reply.chatId, chatType: 'dm' }, text: reply.text, source: 'bench' });
      });
    });
  } finally {
    await stopListening();
    await consumer.stop();
  }
  return summary('outbox + NOTIFY (today)', rate, clock);
}

async function viaBossWork(db: Db, url: string, sender: OutboundSender, rate: number, count: number): Promise<DeliveryLatency> {
  const clock = new Clock();
  const boss = new PgBoss({ connectionString: withDefaultUser(url), schema: 'pgboss', max: 4, supervise: false, schedule: false });
  boss.on('error', () => undefined);
  await boss.start();
  try {
    // Eight workers, as the DeliveryConsumer's eight sends at once.
    for (let i = 0; i < 8; i++) {
      await boss.work<Reply>(QUEUE.name, { pollingIntervalSeconds: 0.5, batchSize: 1 }, async ([job]) => {
        if (job) await timedSender(sender, clock).send(delivery(job.data), AbortSignal.timeout(30_000));
      });
    }
    await drive(rate, count, `work-${rate}`, clock, async (reply) => {
      await db.transaction().execute(async (trx) => void (await sendJob(trx, QUEUE.name, reply)));
    });
  } finally {
    await boss.stop({ graceful: true, timeout: 5000 });
  }
  return summary('pg-boss work(), 0.5 s poll', rate, clock);
}

async function viaBossNudged(db: Db, url: string, sender: OutboundSender, rate: number, count: number): Promise<DeliveryLatency> {
  const clock = new Clock();
  const runtime = new JobRuntime({ db, logger: silentLogger, queues: [QUEUE], maintenanceIntervalSeconds: 60 });
  await runtime.start();
  const consumer = runtime.consume<Reply>(QUEUE.name, { concurrency: 8, pollMs: 1000 }, async (job, signal) => {
    await timedSender(sender, clock).send(delivery(job.data), signal);
  });
  const stopListening = listenForOutbox(url, () => consumer.nudge(), silentLogger);
  try {
    await new Promise((resolve) => setTimeout(resolve, 300));
    await drive(rate, count, `nudged-${rate}`, clock, async (reply) => {
      await db.transaction().execute(async (trx) => {
        await sendJob(trx, QUEUE.name, reply);
        await sql`SELECT pg_notify('herald_outbox', 'telegram')`.execute(trx);
      });
    });
  } finally {
    await stopListening();
    await runtime.stop(5000);
  }
  return summary('pg-boss + NOTIFY, JobConsumer', rate, clock);
}

export async function runDeliveryBench(progress: (message: string) => void, rates = [5, 20, 50], seconds = 6): Promise<DeliveryLatency[]> {
  const database = await createTestDatabase();
  // Room for the consumers' eight sends and the driver's commits at once, as a worker's pool has.
  const db = createDb({ url: database.url, maxConnections: 12 });
  let telegram: FakeTelegram | undefined;
  try {
    await prepareJobs(db, [QUEUE]);
    telegram = await startFakeTelegram();
    for (let chat = 0; chat < CHATS; chat++) telegram.userMessage({ chatId: 1000 + chat, from: { id: 42 }, text: 'hello bot' });
    const sender = TelegramSender.fromConfig({ botToken: telegram.token, apiRoot: telegram.apiRoot });
    const results: DeliveryLatency[] = [];
    for (const rate of rates) {
      const count = Math.min(300, rate * seconds);
      for (const [name, path] of [
        ['outbox', viaOutbox],
        ['pg-boss work()', viaBossWork],
        ['pg-boss + NOTIFY', viaBossNudged],
      ] as const) {
        progress(`delivery latency: ${name} at ${rate}/s`);
        results.push(await path(db, database.url, sender, rate, count));
        await sql`DELETE FROM outbox`.execute(db);
      }
    }
    return results;
  } finally {
    await telegram?.close();
    await db.destroy();
    await database.drop();
  }
}
