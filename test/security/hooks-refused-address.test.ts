import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { silentLogger } from '@herald/core';
import { HOOK_DELIVERY_DEAD_LETTER, HOOK_DELIVERY_QUEUE } from '@herald/hooks';
import { sendHookDelivery } from '../../libs/hooks/src/url-hooks.ts';
import { HookDeliveryService } from '../../services/scheduler/src/hook-delivery.ts';
import { createTestDatabase } from '../support/test-database.ts';
import type { TestDatabase } from '../support/test-database.ts';
import { waitFor } from '../support/wait.ts';

/*
 * Issue 39, point 7: a url hook to a refused address was retried with backoff (eight times, about
 * half an hour) although no retry can change the refusal. It now fails at once, straight to the
 * dead letter with the reason, like a cron webhook's refusal; a receiver that answers 500 is still
 * retried.
 */

interface JobRow {
  name: string;
  state: string;
  retry_count: number;
  output: { message?: string } | null;
  data: { hook: string };
}

describe('url hook deliveries to a refused address', () => {
  let database: TestDatabase;
  let service: HookDeliveryService;
  const hits: string[] = [];
  const receiver = createServer((request, response) => {
    hits.push(request.url ?? '');
    response.writeHead(500).end();
  });
  const jobs = async (hook: string) =>
    (
      await sql<JobRow>`SELECT name, state::text AS state, retry_count, output, data FROM pgboss.job
                         WHERE data->>'hook' = ${hook} ORDER BY created_on`.execute(database.db)
    ).rows;

  beforeAll(async () => {
    database = await createTestDatabase();
    await new Promise<void>((resolve) => receiver.listen(0, '127.0.0.1', resolve));
    service = new HookDeliveryService({ db: database.db, logger: silentLogger, secret: 'hook-secret-0123456789abcdef', allowlist: [], tickMs: 50 });
    await service.start();
  });
  afterAll(async () => {
    await service?.stop(1000);
    await new Promise((resolve) => receiver.close(resolve));
    await database?.drop();
  });

  it('fails at once, without retries, and the dead letter says why', async () => {
    const port = (receiver.address() as AddressInfo).port;
    // 127.0.0.1 is refused (HERALD_WEB_ALLOWLIST is empty): the receiver is never reached.
    await sendHookDelivery(database.db, { hook: 'loopback', url: `http://127.0.0.1:${port}/hook`, event: 'post_tool_call', body: '{}' }, undefined);
    await sendHookDelivery(database.db, { hook: 'metadata', url: 'http://169.254.169.254/latest/meta-data', event: 'post_tool_call', body: '{}' }, undefined);
    for (const hook of ['loopback', 'metadata']) {
      const settled = async () => (await jobs(hook)).some((job) => job.name === HOOK_DELIVERY_DEAD_LETTER);
      await waitFor(settled, { timeoutMs: 20_000, what: `${hook}'s dead letter` }).catch(async (error: Error) => {
        throw new Error(`${error.message}: ${JSON.stringify(await jobs(hook))}`);
      });
      const [delivery, deadLetter] = await jobs(hook);
      expect(delivery).toMatchObject({ name: HOOK_DELIVERY_QUEUE, state: 'failed', retry_count: 0 });
      expect(delivery!.output?.message).toMatch(new RegExp(`url hook '${hook}' refused: refused to fetch .*(loopback|link-local)`));
      expect(deadLetter!.name).toBe(HOOK_DELIVERY_DEAD_LETTER);
    }
    expect(hits).toEqual([]);
  });

  it('still retries a receiver that answers 500', async () => {
    const retrying = new HookDeliveryService({ db: database.db, logger: silentLogger, secret: 'hook-secret-0123456789abcdef', allowlist: ['127.0.0.1'], tickMs: 50 });
    await service.stop(1000);
    service = retrying;
    await service.start();
    const port = (receiver.address() as AddressInfo).port;
    await sendHookDelivery(database.db, { hook: 'flaky', url: `http://127.0.0.1:${port}/flaky`, event: 'post_tool_call', body: '{}' }, undefined);
    await waitFor(async () => (await jobs('flaky'))[0]?.state === 'retry', { timeoutMs: 20_000, what: 'a retry' });
    expect(hits).toContain('/flaky');
  });
});
