import { createServer } from 'node:http';
import type { Server } from 'node:http';
import type { LookupAddress } from 'node:dns';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DeliveryError } from '@herald/delivery';
import type { DeliveryProgress, OutboundDelivery } from '@herald/delivery';
import { WebhookSender } from '@herald/scheduler';
import { createWebExtractTool } from '@herald/tools';
import type { LookupFunction } from '@herald/tools';
import { startFakeOpenAI } from '../support/fake-llm.ts';
import type { FakeLLM } from '../support/fake-llm.ts';
import { startStack, waitFor } from '../support/stack.ts';
import type { Stack } from '../support/stack.ts';
import { offlineContext } from '../../libs/tools/test/call-context.ts';

/*
 * Issue 17, point 9: a URL someone outside the platform chose (a cron webhook, a page the model
 * fetches) is resolved once, every address is checked, and the socket connects to the checked
 * address. A DNS server we control here (an injected lookup) plays the attacker: it answers an
 * allowed address first and 127.0.0.1 afterwards, or fails, or mixes the two.
 */

interface Receiver {
  server: Server;
  hits: string[];
}

/** Two servers on one port: the allowed one on 127.0.0.2, the victim on 127.0.0.1. */
async function receivers(): Promise<{ good: Receiver; victim: Receiver; port: number }> {
  const make = (name: string, handler?: (url: string) => { status: number; headers?: Record<string, string> }): Receiver => {
    const hits: string[] = [];
    const server = createServer((request, response) => {
      hits.push(request.url ?? '');
      request.resume();
      const answer = handler?.(request.url ?? '') ?? { status: 200 };
      response.writeHead(answer.status, { 'content-type': 'text/plain', ...answer.headers }).end(`${name} answered`);
    });
    return { server, hits };
  };
  const good = make('good', (url) => (url === '/to-victim' ? { status: 302, headers: { location: '/secret' } } : { status: 200 }));
  const victim = make('victim');
  await new Promise<void>((resolve) => good.server.listen(0, '127.0.0.2', resolve));
  const { port } = good.server.address() as AddressInfo;
  await new Promise<void>((resolve) => victim.server.listen(port, '127.0.0.1', resolve));
  return { good, victim, port };
}

/** A resolver that answers `first` once, then `later` for every other question. */
function rebinding(first: string[], later: string[]): LookupFunction & { calls: number } {
  const lookup = async (): Promise<LookupAddress[]> => {
    lookup.calls += 1;
    return (lookup.calls === 1 ? first : later).map((address) => ({ address, family: 4 }));
  };
  lookup.calls = 0;
  return lookup;
}

const failing: LookupFunction = async (hostname) => {
  throw Object.assign(new Error(`getaddrinfo ENOTFOUND ${hostname}`), { code: 'ENOTFOUND' });
};

function delivery(url: string): OutboundDelivery & { marks: string[] } {
  const marks: string[] = [];
  const progress: DeliveryProgress = {
    partsSent: [],
    inFlight: null,
    beginPart: async (part) => {
      marks.push(`begin ${part}`);
      return { part, marker: 'test', anchor: null };
    },
    partSent: async (part, id) => void marks.push(`sent ${part} ${id}`),
    clearInFlight: async () => void marks.push('cleared'),
    recentChatMessageIds: async () => [],
  };
  return {
    id: '1',
    idempotencyKey: `test:${url}`,
    drafts: [],
    platform: 'webhook',
    target: { url },
    text: 'report',
    sessionId: null,
    source: 'cron',
    attempts: 1,
    progress,
    marks,
  };
}

describe('outbound URLs are pinned to the address that was checked', () => {
  let good: Receiver;
  let victim: Receiver;
  let port: number;
  beforeAll(async () => {
    ({ good, victim, port } = await receivers());
  });
  afterAll(async () => {
    await new Promise((resolve) => good.server.close(resolve));
    await new Promise((resolve) => victim.server.close(resolve));
  });

  it('webhook: a failed lookup is a refusal, before anything is marked as sent', async () => {
    const sender = new WebhookSender({ lookup: failing });
    const item = delivery('http://hooks.example.test/x');
    const error = await sender.send(item, new AbortController().signal).catch((caught: unknown) => caught);
    expect(DeliveryError.isInstance(error)).toBe(true);
    expect((error as DeliveryError).retryable).toBe(false);
    expect((error as Error).message).toMatch(/refused: .*could not be resolved \(ENOTFOUND\)/);
    expect(item.marks).toEqual([]);
  });

  it('webhook: rebinding to 127.0.0.1 after the check cannot reach it', async () => {
    const lookup = rebinding(['127.0.0.2'], ['127.0.0.1']);
    const sender = new WebhookSender({ lookup, allowlist: ['127.0.0.2'] });
    const first = delivery(`http://rebind.example.test:${port}/hook`);
    expect(await sender.send(first, new AbortController().signal)).toMatchObject({ messageIds: ['http-200'] });
    // One question to DNS for the check and the connect together: nothing asked again in between.
    expect(lookup.calls).toBe(1);
    expect(good.hits).toEqual(['/hook']);
    // The name now points at loopback: the next send asks again, and that answer is refused.
    const second = delivery(`http://rebind.example.test:${port}/again`);
    await expect(sender.send(second, new AbortController().signal)).rejects.toThrow(/refused: .*127\.0\.0\.1 is a loopback/);
    expect(second.marks).toEqual([]);
    expect(victim.hits).toEqual([]);
  });

  it('webhook: a name with any blocked address among its answers is refused', async () => {
    const sender = new WebhookSender({ lookup: rebinding(['127.0.0.2', '127.0.0.1'], []), allowlist: ['127.0.0.2'] });
    await expect(sender.send(delivery(`http://mixed.example.test:${port}/hook`), new AbortController().signal)).rejects.toThrow(/127\.0\.0\.1 is a loopback/);
    expect(victim.hits).toEqual([]);
  });

  it('web_extract: each hop is resolved and checked where it connects; a rebound redirect is refused', async () => {
    const lookup = rebinding(['127.0.0.2'], ['127.0.0.1']);
    const tool = createWebExtractTool({ allowlist: ['127.0.0.2'], lookup });
    const run = (urls: string[]) => tool.execute(tool.schema.parse({ urls }), offlineContext());
    // The page redirects to the same name, which now resolves to the victim.
    await expect(run([`http://rebind.example.test:${port}/to-victim`])).rejects.toThrow(/refused to fetch rebind\.example\.test: 127\.0\.0\.1 is a loopback/);
    expect(good.hits).toContain('/to-victim');
    expect(victim.hits).toEqual([]);
    const unresolved = createWebExtractTool({ lookup: failing });
    await expect(unresolved.execute(unresolved.schema.parse({ urls: ['http://nowhere.example.test/'] }), offlineContext())).rejects.toThrow(/could not be resolved \(ENOTFOUND\)/);
  });
});

describe('a cron webhook whose name does not resolve, end to end', () => {
  let llm: FakeLLM;
  let stack: Stack;
  beforeAll(async () => {
    llm = await startFakeOpenAI();
    llm.handler = () => ({ text: 'hourly check: all good' });
    stack = await startStack({
      scheduler: true,
      env: {
        HERALD_MODEL: 'openai/gpt-test',
        OPENAI_BASE_URL: llm.url,
        OPENAI_API_KEY: 'sk-test',
        HERALD_DELIVERY_POLL_MS: '100',
        HERALD_SCHEDULER_TICK_MS: '100',
        // Webhook targets are an operator's (docs/security.md): the job's owner is one.
        HERALD_OPERATORS: 'api:42',
      },
    });
  });
  afterAll(async () => {
    await stack.stop();
    await llm.close();
  });

  it('is refused with the reason, not posted to whatever the name means later', async () => {
    // .invalid never resolves (RFC 6761): the system resolver answers NXDOMAIN.
    const created = await stack.post('/v1/cron/jobs', { user_id: '42', schedule: 'every 1d', prompt: 'hourly check', deliver: 'webhook:http://herald-nowhere.invalid/hook' });
    expect(created.status).toBe(201);
    const started = await stack.post(`/v1/cron/jobs/${created.body.job_id}/run`, {});
    expect(started.status).toBe(202);
    const run = await waitFor(
      async () => {
        const runs = (await stack.get(`/v1/cron/jobs/${created.body.job_id}/runs`)).body.runs as any[];
        const found = runs.find((candidate) => candidate.run_id === started.body.run_id);
        return found?.deliveries[0]?.status === 'failed' ? found : undefined;
      },
      { timeoutMs: 40_000, what: 'the webhook delivery refused' },
    );
    expect(JSON.stringify(run.deliveries[0])).toMatch(/herald-nowhere\.invalid refused: .*could not be resolved/);
    expect(run.deliveries[0].attempts).toBe(1);
  });
});
