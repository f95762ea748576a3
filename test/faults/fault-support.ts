import { execFileSync, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { appendFileSync, chownSync, mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { sql } from 'kysely';
import type { Db } from '@herald/db';
import { waitFor } from '../support/wait.ts';
import { freePort } from '../support/ports.ts';

/**
 * What the fault tests share: services the test owns (a Postgres it may restart, a Redis it may
 * restart empty), steady traffic with idempotency keys, the exactly-once check and the recovery
 * time each fault reports. See docs/guarantees.md ("Faults").
 */

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export { freePort };

/** Where each fault's recovery time is written, one JSON line per fault (and printed). */
const RESULTS = join(process.cwd(), 'test-results', 'faults.jsonl');

export function recordRecovery(fault: string, recoveryMs: number, extra: Record<string, unknown> = {}): void {
  mkdirSync(join(process.cwd(), 'test-results'), { recursive: true });
  appendFileSync(RESULTS, `${JSON.stringify({ fault, recoveryMs: Math.round(recoveryMs), at: new Date().toISOString(), ...extra })}\n`);
  process.stderr.write(`fault ${fault}: recovered in ${Math.round(recoveryMs)} ms ${JSON.stringify(extra)}\n`);
}

export const PG_BIN = '/usr/lib/postgresql/15/bin';

export function postgresAccount(): { uid: number; gid: number } {
  const uid = Number(execFileSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).trim());
  const gid = Number(execFileSync('id', ['-g', 'postgres'], { encoding: 'utf8' }).trim());
  return { uid, gid };
}

export interface OwnService {
  url: string;
  port: number;
  /** Stops the server (fast shutdown) and starts it again on the same port; resolves once it answers. */
  restart(): Promise<void>;
  stop(): Promise<void>;
}

function stopChild(child: ChildProcess, signal: NodeJS.Signals): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    child.once('exit', () => resolve());
    child.kill(signal);
  });
}

/**
 * A Postgres 15 of the test's own (the machine's binaries, initdb in a temporary directory, run as
 * the postgres user since the tests run as root), on an ephemeral port, trust auth.
 */
/** `listen`: Postgres's listen_addresses (127.0.0.1 must be one); `trustNetwork`: a CIDR let in without a password. */
export async function startOwnPostgres(listen = '127.0.0.1', trustNetwork?: string): Promise<OwnService> {
  const dir = mkdtempSync(join(tmpdir(), 'herald-fault-pg-'));
  const account = process.getuid?.() === 0 ? postgresAccount() : undefined;
  if (account) chownSync(dir, account.uid, account.gid);
  const as = account ? { uid: account.uid, gid: account.gid } : {};
  execFileSync(join(PG_BIN, 'initdb'), ['-D', join(dir, 'data'), '-U', 'postgres', '-A', 'trust', '--no-locale', '-E', 'UTF8'], { stdio: 'ignore', ...as });
  // A network namespace's worker connects from its veth address.
  if (trustNetwork) appendFileSync(join(dir, 'data', 'pg_hba.conf'), `host all all ${trustNetwork} trust\n`);
  const port = await freePort();
  let child: ChildProcess;
  const start = async () => {
    child = spawn(
      join(PG_BIN, 'postgres'),
      ['-D', join(dir, 'data'), '-p', String(port), '-c', `listen_addresses=${listen}`, '-c', 'unix_socket_directories=', '-c', 'max_connections=200', '-c', 'fsync=off'],
      { stdio: 'ignore', ...as },
    );
    const { default: pg } = await import('pg');
    await waitFor(
      async () => {
        const client = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${port}/postgres`, connectionTimeoutMillis: 1000 });
        client.on('error', () => undefined);
        try {
          await client.connect();
          await client.query('SELECT 1');
          return true;
        } finally {
          await client.end().catch(() => undefined);
        }
      },
      { timeoutMs: 60_000, intervalMs: 100, what: 'the test Postgres' },
    );
  };
  await start();
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    port,
    async restart() {
      // SIGINT: fast shutdown, every connection cut, as a restart by an operator or a failover.
      await stopChild(child, 'SIGINT');
      await start();
    },
    async stop() {
      await stopChild(child, 'SIGINT');
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** A redis-server of the test's own on an ephemeral port, no persistence: a restart comes back empty. */
/** `listen`: the addresses to bind, space-separated (127.0.0.1 must be one). */
export async function startOwnRedis(listen = '127.0.0.1'): Promise<OwnService> {
  const port = await freePort();
  let child: ChildProcess;
  const start = async () => {
    child = spawn('redis-server', ['--port', String(port), '--bind', ...listen.split(' '), '--protected-mode', 'no', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    await waitFor(
      async () => {
        const { Redis } = await import('ioredis');
        const redis = new Redis({ host: '127.0.0.1', port, lazyConnect: true, maxRetriesPerRequest: 0, retryStrategy: () => null });
        redis.on('error', () => undefined);
        try {
          await redis.connect();
          return (await redis.ping()) === 'PONG';
        } finally {
          redis.disconnect();
        }
      },
      { timeoutMs: 30_000, intervalMs: 100, what: 'the test Redis' },
    );
  };
  await start();
  return {
    url: `redis://127.0.0.1:${port}`,
    port,
    async restart() {
      await stopChild(child, 'SIGKILL');
      await start();
    },
    async stop() {
      await stopChild(child, 'SIGKILL');
    },
  };
}

export interface Traffic {
  /** Resolves once every message was accepted (202/200) by some ingress. */
  sent: Promise<void>;
  total: number;
  /** Stops sending after the current messages (for a test that ends early). */
  stop(): void;
}

/**
 * `sessions` chats sending `messages` each, one at a time with a pause, to the given ingresses in
 * turn; a failed send (refused, 5xx, connection error) is retried with the same idempotency key
 * on the next ingress, as a client would.
 */
export function steadyTraffic(urls: () => string[], token: string, options: { prefix: string; sessions: number; messages: number; pauseMs: number }): Traffic {
  let stopped = false;
  const send = async (chat: number, index: number) => {
    const body = JSON.stringify({ chat_id: `${options.prefix}-${chat}`, user_id: `u${chat}`, text: `${options.prefix} c${chat} m${index}`, idempotency_key: `m${index}` });
    for (let attempt = 0; ; attempt++) {
      const targets = urls();
      const url = targets[(chat + attempt) % targets.length]!;
      const status = await fetch(`${url}/v1/messages`, {
        method: 'POST',
        headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
        body,
        signal: AbortSignal.timeout(5000),
      })
        .then(async (response) => {
          await response.arrayBuffer();
          return response.status;
        })
        .catch(() => 0);
      if (status === 200 || status === 202) return;
      if (status >= 400 && status < 500 && status !== 409 && status !== 429) throw new Error(`refused ${status}: ${body}`);
      if (attempt > 600) throw new Error(`could not send ${body}`);
      await sleep(100);
    }
  };
  const sent = Promise.all(
    Array.from({ length: options.sessions }, async (_, chat) => {
      for (let index = 0; index < options.messages && !stopped; index++) {
        await send(chat, index);
        await sleep(options.pauseMs * (0.5 + Math.random()));
      }
    }),
  ).then(() => undefined);
  return { sent, total: options.sessions * options.messages, stop: () => (stopped = true) };
}

export async function answeredCount(db: Db): Promise<number> {
  const rows = await sql<{ n: string }>`SELECT count(*) AS n FROM inbound_events WHERE status = 'done'`.execute(db);
  return Number(rows.rows[0]?.n);
}

/** Polls until `count` answered turns exist; resolves with when the first answer after `since` was stored. */
export async function firstAnswerAfter(db: Db, since: Date, timeoutMs = 60_000): Promise<Date> {
  return waitFor(
    async () => {
      const rows = await sql<{ at: Date | null }>`
        SELECT min(m.created_at) AS at FROM messages m WHERE m.role = 'assistant' AND m.created_at > ${since}`.execute(db);
      return rows.rows[0]?.at ?? undefined;
    },
    { timeoutMs, intervalMs: 100, what: 'an answer after the fault' },
  );
}

/**
 * Nothing lost, nothing answered twice: every message sent is one inbound event, done, answered
 * `echo: <text>`, and each chat's transcript is its messages in order, each followed by exactly one answer.
 */
export async function expectExactlyOnce(db: Db, options: { prefix: string; sessions: number; messages: number }): Promise<void> {
  const { expect } = await import('vitest');
  await waitFor(async () => (await answeredCount(db)) >= options.sessions * options.messages, {
    timeoutMs: 120_000,
    intervalMs: 250,
    what: 'every message answered',
  });
  const events = await db.selectFrom('inbound_events').select(['text', 'reply_text', 'status']).execute();
  expect(events).toHaveLength(options.sessions * options.messages);
  for (const event of events) expect(event.reply_text).toBe(`echo: ${event.text}`);
  const rows = await sql<{ chat_id: string; role: string; content: string }>`
    SELECT s.chat_id, m.role, m.content FROM messages m JOIN sessions s ON s.id = m.session_id ORDER BY s.chat_id, m.seq`.execute(db);
  const transcripts = new Map<string, string[]>();
  for (const row of rows.rows) transcripts.set(row.chat_id, [...(transcripts.get(row.chat_id) ?? []), `${row.role}:${row.content}`]);
  for (let chat = 0; chat < options.sessions; chat++) {
    const expected = Array.from({ length: options.messages }, (_, index) => {
      const text = `${options.prefix} c${chat} m${index}`;
      return [`user:${text}`, `assistant:echo: ${text}`];
    }).flat();
    expect(transcripts.get(`${options.prefix}-${chat}`)).toEqual(expected);
  }
}
