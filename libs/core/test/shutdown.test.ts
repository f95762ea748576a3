import { describe, expect, it } from 'vitest';
import { createLogger, Shutdown } from '@herald/core';

describe('Shutdown', () => {
  it('runs the steps in reverse and, at the deadline, names the step it is still waiting on', async () => {
    const lines: Record<string, unknown>[] = [];
    const logger = createLogger({ level: 'info', service: 'test', destination: { write: (line) => void lines.push(JSON.parse(line)) } });
    const shutdown = new Shutdown({ logger, deadlineMs: 100 });
    const ran: string[] = [];
    shutdown.add('postgres', () => void ran.push('postgres'));
    shutdown.add('http server', () => new Promise<void>(() => ran.push('http server')));
    shutdown.add('queue', () => void ran.push('queue'));
    expect(await shutdown.shutdown()).toBe(false);
    expect(ran).toEqual(['queue', 'http server']);
    expect(lines).toContainEqual(expect.objectContaining({ msg: 'shutdown deadline reached', waitingOn: 'http server', deadlineMs: 100 }));
  });
});
