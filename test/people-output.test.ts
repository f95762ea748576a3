import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createTestDatabase } from './support/test-database.ts';
import type { TestDatabase } from './support/test-database.ts';
import { heraldOnTerminal } from './support/pty.ts';
import { freePort } from './support/ports.ts';
import { PROCESS_START_MS } from './support/stack.ts';

describe('output for people: a terminal gets a summary and readable logs, a pipe gets JSON', { timeout: 3 * PROCESS_START_MS }, () => {
  let database: TestDatabase;
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await database.drop();
  });

  it('`herald up` at a terminal: readable lines, migrations in one, a summary naming mode, API, console, token, model and platforms; Ctrl-C stops it quietly', async () => {
    const port = String(await freePort());
    const up = heraldOnTerminal(['up'], { DATABASE_URL: database.url, HERALD_QUEUE: 'postgres', PORT: port, HERALD_METRICS_PORT: '0' });
    await up.until('chat:', { timeoutMs: PROCESS_START_MS });
    const screen = up.screen();
    expect(screen).not.toMatch(/^\{"level"/m);
    expect(screen).toMatch(/INFO: migrations up to date \(0 applied now, \d+ before\)/);
    expect(screen).not.toContain('applied migration');
    expect(screen).toContain('Herald is up.');
    expect(screen).toMatch(/ {2}mode: +external Postgres at 127\.0\.0\.1:5432\/herald_t_\w+, queue on Postgres \(no Redis\); .*chosen because DATABASE_URL is set and HERALD_QUEUE=postgres/);
    expect(screen).toContain(`  API:       http://127.0.0.1:${port}  (open, loopback only: no HERALD_API_TOKEN set)`);
    expect(screen).toContain(`  console:   http://127.0.0.1:${port}/ui/`);
    expect(screen).toMatch(/ {2}model: +none: set HERALD_MODEL/);
    expect(screen).toMatch(/ {2}platforms: +none/);
    // Said once: not again as a log line.
    expect(screen.match(/Herald is up/g)).toHaveLength(1);
    const before = up.screen().length;
    up.type('\x03');
    expect(await up.exited).toBe(0);
    const shutdown = up.screen().slice(before);
    expect(shutdown).toContain('shutting down');
    expect(shutdown).not.toMatch(/WARN|ERROR|^\s+at /m);
  });

  it('LOG_FORMAT=json at a terminal keeps JSON lines', async () => {
    const migrate = heraldOnTerminal(['migrate'], { DATABASE_URL: database.url, LOG_FORMAT: 'json' });
    expect(await migrate.exited).toBe(0);
    expect(migrate.screen()).toMatch(/^\{"level":30,.*"msg":"migrations up to date/m);
  });
});
