import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { PUBLIC_ROUTES } from '@herald/ingress';
import { startFakeTelegram } from '../support/fake-telegram.ts';
import type { FakeTelegram } from '../support/fake-telegram.ts';
import { rawRequest, startWalkableIngress } from '../support/ingress-app.ts';
import type { WalkableIngress } from '../support/ingress-app.ts';
import { startStack, TEST_TOKEN } from '../support/stack.ts';
import type { Stack } from '../support/stack.ts';

/** A concrete path for a route pattern: each parameter gets a plausible value. */
function concrete(pattern: string): string {
  return pattern
    .replace(/:id\b/g, randomUUID())
    .replace(/:profile\b/g, 'main')
    .replace(/:[A-Za-z_]+/g, 'x')
    .replace(/\*$/, 'x');
}

const encodeChar = (char: string) => `%${char.charCodeAt(0).toString(16).padStart(2, '0')}`;

/** The spellings of one path that a router may take for it, or that a naive check may miss. */
function spellings(path: string): string[] {
  const segments = path.split('/').slice(1);
  const first = segments[0] ?? '';
  const rest = segments.slice(1).join('/');
  const tail = rest === '' ? '' : `/${rest}`;
  const digit = first.search(/\d/);
  return [
    path,
    // percent-encoded: the first letter (`/%761/...`), a digit (`/v%31/...`), upper-case hex, every character
    `/${encodeChar(first[0] ?? 'v')}${first.slice(1)}${tail}`,
    ...(digit === -1 ? [] : [`/${first.slice(0, digit)}${encodeChar(first[digit] ?? '1')}${first.slice(digit + 1)}${tail}`]),
    `/${encodeChar(first[0] ?? 'v').toUpperCase()}${first.slice(1)}${tail}`,
    `/${[...first].map(encodeChar).join('')}${tail}`,
    path.replace(/\/(?=[^/]*$)/, '%2f'),
    // double slashes
    `/${path}`,
    path.replace(/\/(?=[^/]*$)/, '//'),
    // dot segments
    `/x/..${path}`,
    `/.${path}`,
    `/${first}/.${tail}`,
    `/${first}/x/..${tail}`,
    `/${first}/%2e%2e/${first}${tail}`,
    // case
    path.toUpperCase(),
    `/${first.toUpperCase()}${tail}`,
    // trailing slash, a query, a semicolon
    `${path}/`,
    `${path}?token=${TEST_TOKEN}`,
    `${path};x`,
  ];
}

describe('one auth decision on the path the router matched (issue 17, point 1)', () => {
  let telegram: FakeTelegram;
  let stack: Stack;
  let ingress: WalkableIngress;

  beforeAll(async () => {
    telegram = await startFakeTelegram();
    // Slack's event routes are public too (their signature guards them): configured so they exist.
    stack = await startStack({
      workers: 0,
      env: {
        ...telegram.env,
        TELEGRAM_MODE: 'webhook',
        TELEGRAM_WEBHOOK_SECRET: 'edge-secret_1',
        SLACK_BOT_TOKEN: 'xoxb-1-edge',
        SLACK_SIGNING_SECRET: 'edge-slack-secret',
        SLACK_API_URL: 'http://127.0.0.1:9/api/',
      },
    });
    ingress = await startWalkableIngress(stack);
  });
  afterAll(async () => {
    await ingress?.close();
    await stack?.stop();
    await telegram?.close();
  });

  it('records every route with its guard: public only where listed, the admin view and /v1 behind the token', () => {
    const urls = new Set(ingress.routes.map((route) => route.url));
    // The walk below covers what the server registered, whatever it is; these must be among it.
    for (const url of ['/v1/messages', '/v1/sessions/:id', '/v1/admin/status', '/admin/queues', '/telegram/webhook', '/healthz']) expect(urls).toContain(url);
    expect(ingress.routes.length).toBeGreaterThan(40);
    const publicUrls = new Set(ingress.routes.filter((route) => route.access === 'public').map((route) => route.url));
    expect([...publicUrls].sort()).toEqual([...PUBLIC_ROUTES].sort());
    for (const route of ingress.routes.filter((r) => r.url.startsWith('/admin/'))) expect(route.access).toBe('admin');
  });

  it('answers 401 or 404 to every spelling of every non-public route without a token, never 2xx or 5xx', async () => {
    const guarded = ingress.routes.filter((route) => route.access !== 'public');
    const seen: string[] = [];
    for (const route of guarded) {
      const path = concrete(route.url);
      const body = ['POST', 'PUT', 'PATCH'].includes(route.method) ? '{}' : undefined;
      const plain = await rawRequest(ingress.url, route.method, path, {}, body);
      // The plain spelling reaches the route itself: the guard, not the router, refuses it.
      expect(plain.status, `${route.method} ${path}`).toBe(401);
      for (const spelling of spellings(path)) {
        const response = await rawRequest(ingress.url, route.method, spelling, {}, body);
        seen.push(`${route.method} ${spelling} ${response.status}`);
        expect([401, 404], `${route.method} ${spelling} -> ${response.status} ${response.body.slice(0, 200)}`).toContain(response.status);
      }
      // A wrong token and a token in another scheme are no better than none.
      expect((await rawRequest(ingress.url, route.method, path, { authorization: 'Bearer wrong-token-123' }, body)).status).toBe(401);
      expect((await rawRequest(ingress.url, route.method, path, { authorization: `Token ${TEST_TOKEN}` }, body)).status).toBe(401);
    }
    // The encoded spellings did reach the routes (401), so the test exercised the decoding router.
    const encoded = seen.filter((line) => line.startsWith('POST /%761/messages ') || line.startsWith('POST /v%31/messages '));
    expect(encoded.length).toBeGreaterThanOrEqual(2);
    expect(new Set(encoded.map((line) => line.split(' ')[2]))).toEqual(new Set(['401']));
  }, 300_000);

  it('still serves the public routes without a token, and the guarded ones with it', async () => {
    expect((await rawRequest(ingress.url, 'GET', '/healthz')).status).toBe(200);
    expect((await rawRequest(ingress.url, 'GET', '/metrics')).status).toBe(200);
    // The webhook checks its own secret.
    expect((await rawRequest(ingress.url, 'POST', '/telegram/webhook', {}, '{"update_id":1}')).status).toBe(401);
    const auth = { authorization: `Bearer ${TEST_TOKEN}` };
    expect((await rawRequest(ingress.url, 'GET', '/v1/admin/status', auth)).status).toBe(200);
    expect((await rawRequest(ingress.url, 'GET', '/%761/admin/status', auth)).status).toBe(200);
    expect((await rawRequest(ingress.url, 'GET', '/admin/queues', auth)).status).toBe(200);
    const basic = `Basic ${Buffer.from(`ops:${TEST_TOKEN}`).toString('base64')}`;
    expect((await rawRequest(ingress.url, 'GET', '/admin/queues', { authorization: basic })).status).toBe(200);
    const refused = await rawRequest(ingress.url, 'GET', '/admin/queues/api/queues');
    expect(refused.status).toBe(401);
  });
});
