import { execFileSync, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { chownSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import pg from 'pg';
import { freePort, PG_BIN, postgresAccount } from '../faults/fault-support.ts';
import type { OwnService } from '../faults/fault-support.ts';
import { waitFor } from './wait.ts';

export interface StreamingReplica {
  port: number;
  /** `url` (a database URL of the primary) pointed at the replica. */
  urlFor(url: string): string;
  /** Runs one statement on the replica's `postgres` database as the superuser. */
  query<T extends pg.QueryResultRow>(text: string, database?: string): Promise<T[]>;
  /** Stops applying the WAL it receives: what the primary commits from now on is not seen here. */
  pauseReplay(): Promise<void>;
  resumeReplay(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * A hot standby of `primary` (a Postgres of the test's own, test/faults/fault-support.ts): copied
 * with pg_basebackup -R (which writes primary_conninfo and standby.signal) into a temporary
 * directory and started as a second postmaster on another port, streaming from the primary. Run as
 * the postgres user when the test runs as root, as Postgres requires.
 */
export async function startStreamingReplica(primary: OwnService): Promise<StreamingReplica> {
  const dir = mkdtempSync(join(tmpdir(), 'herald-replica-'));
  const account = process.getuid?.() === 0 ? postgresAccount() : undefined;
  if (account) chownSync(dir, account.uid, account.gid);
  const as = account ? { uid: account.uid, gid: account.gid } : {};
  const data = join(dir, 'data');
  execFileSync(join(PG_BIN, 'pg_basebackup'), ['-h', '127.0.0.1', '-p', String(primary.port), '-U', 'postgres', '-D', data, '-R', '-X', 'stream', '-c', 'fast'], { stdio: 'ignore', ...as });
  const port = await freePort();
  const child: ChildProcess = spawn(
    join(PG_BIN, 'postgres'),
    ['-D', data, '-p', String(port), '-c', 'listen_addresses=127.0.0.1', '-c', 'unix_socket_directories=', '-c', 'max_connections=200', '-c', 'hot_standby=on', '-c', 'fsync=off'],
    { stdio: 'ignore', ...as },
  );
  const query = async <T extends pg.QueryResultRow>(text: string, database = 'postgres'): Promise<T[]> => {
    const client = new pg.Client({ connectionString: `postgres://postgres@127.0.0.1:${port}/${database}`, connectionTimeoutMillis: 1000 });
    client.on('error', () => undefined);
    try {
      await client.connect();
      return (await client.query<T>(text)).rows;
    } finally {
      await client.end().catch(() => undefined);
    }
  };
  await waitFor(async () => (await query<{ standby: boolean }>('SELECT pg_is_in_recovery() AS standby'))[0]?.standby === true, {
    timeoutMs: 60_000,
    intervalMs: 100,
    what: 'the streaming replica',
  });
  const replayState = async () => (await query<{ state: string }>('SELECT pg_get_wal_replay_pause_state() AS state'))[0]?.state;
  return {
    port,
    urlFor(url) {
      const parsed = new URL(url);
      parsed.port = String(port);
      return parsed.toString();
    },
    query,
    async pauseReplay() {
      await query('SELECT pg_wal_replay_pause()');
      await waitFor(async () => (await replayState()) === 'paused', { what: 'replay paused' });
    },
    async resumeReplay() {
      await query('SELECT pg_wal_replay_resume()');
    },
    async stop() {
      if (child.exitCode === null && child.signalCode === null) {
        await new Promise<void>((resolve) => {
          child.once('exit', () => resolve());
          child.kill('SIGINT');
        });
      }
      rmSync(dir, { recursive: true, force: true });
    },
  };
}
