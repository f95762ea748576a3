import { writeFileSync } from 'node:fs';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '@herald/core';
import { openSandbox } from '@herald/tools';
import { sandboxCommands } from '../../cli/src/hook-wiring.ts';

/** What the worker holds: the command hook must see none of it. */
const WORKER_ENV = { PATH: '/usr/bin:/bin', LANG: 'C.UTF-8', DATABASE_URL: 'postgres://herald:pw-leak@db/herald', TELEGRAM_BOT_TOKEN: '123:leak', HERALD_API_TOKEN: 'api-leak' };

describe('command hooks run in the tool sandbox (issue 24: no platform secrets)', () => {
  let outside: string;
  beforeAll(async () => {
    outside = await mkdtemp(join(tmpdir(), 'herald-outside-'));
    writeFileSync(join(outside, 'secret.txt'), 'outside-secret');
  });
  afterAll(async () => {
    await rm(outside, { recursive: true, force: true });
  });

  it('gets the event on stdin, and cannot see the worker environment, its /proc entry or files outside', async () => {
    const settings = loadConfig({ HERALD_SANDBOX: 'bwrap' }).tools.sandbox;
    const commands = sandboxCommands(() => openSandbox({ settings, env: WORKER_ENV }));
    const script = [
      'read -r event',
      'echo "event=$event"',
      'env | grep -c -E "DATABASE_URL|TOKEN|leak" || true',
      `cat /proc/${process.pid}/environ 2>/dev/null && echo worker-environ-readable || echo worker-environ-hidden`,
      `cat ${join(outside, 'secret.txt')} 2>/dev/null || echo outside-hidden`,
    ].join('\n');
    const result = await commands.run(['/bin/sh', '-c', script], '{"event":"cron_fire"}\n', 5000, new AbortController().signal);
    expect(result.exitCode).toBe(0);
    expect(result.stdout.split('\n').filter(Boolean)).toEqual(['event={"event":"cron_fire"}', '0', 'worker-environ-hidden', 'outside-hidden']);
    expect(result.stdout).not.toContain('leak');
  });
});
