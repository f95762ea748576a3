import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI } from '../support/fake-llm.ts';
import type { FakeLLM } from '../support/fake-llm.ts';
import { rawRequest, startWalkableIngress } from '../support/ingress-app.ts';
import type { WalkableIngress } from '../support/ingress-app.ts';
import { startStack, TEST_TOKEN } from '../support/stack.ts';
import type { Stack } from '../support/stack.ts';

const AUTH = { authorization: `Bearer ${TEST_TOKEN}` };
const NUL = '\u0000';

/** A realistic body for the routes that take one; any other route gets a generic object. */
const EXAMPLE_BODIES: Record<string, Record<string, unknown>> = {
  'POST /v1/messages': { chat_id: 'c1', user_id: 'u1', text: 'hello', user_name: 'Ann', thread_id: 't1', idempotency_key: 'k1' },
  'POST /v1/cron/jobs': { prompt: 'report', schedule: 'every 1h', user_id: 'u1', name: 'n', timezone: 'UTC', deliver: ['origin'], skills: ['s'] },
  'PATCH /v1/cron/jobs/:id': { name: 'n', prompt: 'p' },
  'PATCH /v1/profiles/:profile': { display_name: 'Main', identity: 'You are Herald.', search_shared_chat_types: ['group'] },
  'PUT /v1/profiles/:profile/documents/:name': { content: 'notes' },
  'POST /v1/profiles/:profile/skills/_import': { skills: [{ files: { 'SKILL.md': '---\nname: s\ndescription: d\n---\nbody' } }] },
  'POST /v1/waits/:id': { answer: 'yes', user_id: 'u1' },
  'PATCH /v1/sessions/:id': { queue_mode: 'steer' },
};

function concrete(pattern: string, id: string = randomUUID()): string {
  return pattern
    .replace(/:id\b/g, id)
    .replace(/:entry\b/g, '12345')
    .replace(/:profile\b/g, 'main')
    .replace(/:[A-Za-z_]+/g, 'x')
    .replace(/\*$/, 'x');
}

/** Every string leaf of a JSON value with its path. */
function stringLeaves(value: unknown, path: string[] = []): string[][] {
  if (typeof value === 'string') return [path];
  if (typeof value !== 'object' || value === null) return [];
  return Object.entries(value).flatMap(([key, item]) => stringLeaves(item, [...path, key]));
}

/** A copy of the body with `insert` spliced into the string at `path`. */
function withInsert(body: Record<string, unknown>, keys: string[], insert: string): unknown {
  const copy = structuredClone(body) as any;
  let node = copy;
  for (const key of keys.slice(0, -1)) node = node[key];
  const last = keys[keys.length - 1]!;
  node[last] = `${String(node[last]).slice(0, 1)}${insert}${String(node[last]).slice(1)}`;
  return copy;
}

describe('input hygiene at the edge (issue 17, point 4)', () => {
  let llm: FakeLLM;
  let stack: Stack;
  let ingress: WalkableIngress;
  const counts = async () =>
    (
      await sql<{ events: string; jobs: string; documents: string }>`
        SELECT (SELECT count(*) FROM inbound_events) AS events, (SELECT count(*) FROM cron_jobs) AS jobs,
               (SELECT count(*) FROM profile_documents) AS documents`.execute(stack.database.db)
    ).rows[0];

  beforeAll(async () => {
    llm = await startFakeOpenAI();
    stack = await startStack({ model: llm, testTools: true });
    ingress = await startWalkableIngress(stack);
  });
  afterAll(async () => {
    await ingress?.close();
    await stack?.stop();
  });

  const guarded = () => ingress.routes.filter((route) => route.access !== 'public' && route.method !== 'HEAD');

  it('refuses NUL and unpaired surrogates in every JSON body field with a 400 naming the field, writing nothing', async () => {
    const before = await counts();
    const bodyRoutes = guarded().filter((route) => ['POST', 'PUT', 'PATCH'].includes(route.method));
    expect(bodyRoutes.length).toBeGreaterThanOrEqual(10);
    let checked = 0;
    for (const route of bodyRoutes) {
      const body = EXAMPLE_BODIES[`${route.method} ${route.url}`] ?? { note: 'text', nested: { list: ['item'] } };
      const path = concrete(route.url);
      for (const leaf of stringLeaves(body)) {
        const field = leaf.join('.');
        for (const bad of [NUL, '\ud800', '\udc00x']) {
          const response = await rawRequest(ingress.url, route.method, path, AUTH, JSON.stringify(withInsert(body, leaf, bad)));
          const what = `${route.method} ${route.url} ${field} ${JSON.stringify(bad)}: ${response.status} ${response.body.slice(0, 300)}`;
          expect(response.status, what).toBe(400);
          expect(JSON.parse(response.body).error.field, what).toBe(field);
          checked++;
        }
      }
      // In an object key too.
      const keyed = await rawRequest(ingress.url, route.method, path, AUTH, JSON.stringify({ [`a${NUL}b`]: 'x' }));
      expect(keyed.status, `${route.method} ${route.url} key`).toBe(400);
    }
    expect(checked).toBeGreaterThanOrEqual(60);
    expect(await counts()).toEqual(before);
  }, 300_000);

  it('answers JSON nested 5,000 levels deep with a 400 naming the body on every route, never a 500 (issue 39)', async () => {
    const before = await counts();
    const deepArray = `${'['.repeat(5000)}${']'.repeat(5000)}`;
    const deepObject = `${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}`;
    const bodyRoutes = guarded().filter((route) => ['POST', 'PUT', 'PATCH'].includes(route.method));
    for (const route of bodyRoutes) {
      for (const [shape, body] of [
        ['array', deepArray],
        ['object', deepObject],
        ['inside a field', `{"text":"hi","metadata":${deepObject}}`],
      ] as const) {
        const response = await rawRequest(ingress.url, route.method, concrete(route.url), AUTH, body);
        const what = `${route.method} ${route.url} ${shape}: ${response.status} ${response.body.slice(0, 300)}`;
        expect(response.status, what).toBe(400);
        expect(JSON.parse(response.body).error, what).toMatchObject({ field: 'body', message: expect.stringMatching(/nested deeper than 64 levels/) });
      }
    }
    expect(await counts()).toEqual(before);
    // The limit leaves room for every real body: 64 levels still reach the route's own checks.
    const atLimit = await rawRequest(ingress.url, 'POST', '/v1/messages', AUTH, JSON.stringify({ chat_id: 'c', user_id: 'u', text: 'hi', x: JSON.parse(`${'['.repeat(62)}${']'.repeat(62)}`) }));
    expect(atLimit.body).not.toMatch(/nested deeper/);
    expect(atLimit.status).toBeLessThan(500);
  }, 300_000);

  it("refuses NUL in every route's query string and path with a 400 naming the parameter", async () => {
    for (const route of guarded()) {
      const path = concrete(route.url);
      for (const [query, field] of [
        ['q=a%00b', 'q'],
        ['user_id=%ED%A0%80', 'user_id'],
        ['limit=1&profile=ma%00in', 'profile'],
      ] as const) {
        const response = await rawRequest(ingress.url, route.method, `${path}?${query}`, AUTH, ['POST', 'PUT', 'PATCH'].includes(route.method) ? '{}' : undefined);
        const what = `${route.method} ${route.url}?${query}: ${response.status} ${response.body.slice(0, 300)}`;
        // %ED%A0%80 is a UTF-8 encoded surrogate: not valid UTF-8, so the decoder makes it U+FFFD (storable).
        if (field === 'user_id') {
          expect(response.status, what).toBeLessThan(500);
          continue;
        }
        expect(response.status, what).toBe(400);
        expect(JSON.parse(response.body).error.field, what).toBe(field);
      }
      if (route.url.includes(':profile')) {
        const response = await rawRequest(ingress.url, route.method, concrete(route.url).replace('/main', '/ma%00in'), AUTH, ['POST', 'PUT', 'PATCH'].includes(route.method) ? '{}' : undefined);
        expect(response.status, `${route.method} ${route.url} profile NUL`).toBe(400);
        expect(JSON.parse(response.body).error.field).toBe('profile');
      }
    }
  }, 300_000);

  it('answers malformed ids in URLs with 400 naming the parameter and unknown ones with 404, never 500', async () => {
    const idRoutes = guarded().filter((route) => /:(id|entry)\b/.test(route.url));
    expect(idRoutes.map((route) => route.url)).toEqual(
      expect.arrayContaining(['/v1/sessions/:id', '/v1/waits/:id', '/v1/events/:id', '/v1/cron/jobs/:id', '/v1/reviews/:id', '/v1/profiles/:profile/memory/:entry']),
    );
    const malformed = ['abc', '-'.repeat(36), `${randomUUID()}x`, randomUUID().replace(/-/g, ''), "1' OR '1'='1", '%2e%2e', 'ｆ'.repeat(8), '1e3', '-1', '99999999999999999999999'];
    for (const route of idRoutes) {
      const param = route.url.includes(':entry') ? 'entry' : 'id';
      const body = ['POST', 'PUT', 'PATCH'].includes(route.method) ? JSON.stringify(EXAMPLE_BODIES[`${route.method} ${route.url}`] ?? {}) : undefined;
      for (const id of malformed) {
        const path = route.url
          .replace(/:(id|entry)\b/, encodeURIComponent(id))
          .replace(':profile', 'main')
          .replace(/:[A-Za-z_]+/g, 'x');
        const response = await rawRequest(ingress.url, route.method, path, AUTH, body);
        const what = `${route.method} ${path}: ${response.status} ${response.body.slice(0, 200)}`;
        expect(response.status, what).toBe(400);
        expect(JSON.parse(response.body).error.field, what).toBe(param);
      }
      const unknown = await rawRequest(ingress.url, route.method, concrete(route.url, randomUUID()), AUTH, body);
      expect(unknown.status, `${route.method} ${route.url} unknown id: ${unknown.body.slice(0, 200)}`).toBe(404);
    }
  }, 300_000);

  it('stores a model reply and a tool output holding NUL or unpaired surrogates cleaned, once, without calling the model again', async () => {
    llm.script({ toolCalls: [{ name: 'slow_lookup', arguments: { label: `lo\ud800ok` } }] }, { text: `he${NUL}llo\udfff world${NUL}` });
    const posted = await stack.post('/v1/messages?wait=60', { chat_id: 'nul-1', user_id: 'u1', text: 'look it up' });
    expect(posted.status, JSON.stringify(posted.body)).toBe(200);
    expect(posted.body.reply.text).toBe('hello world');
    const sessionId = posted.body.session_id as string;
    expect(llm.requestsFor(sessionId)).toHaveLength(2);
    const { rows } = await sql<{ role: string; content: string }>`
      SELECT role, content FROM messages WHERE session_id = ${sessionId} ORDER BY seq`.execute(stack.database.db);
    expect(rows.map((row) => [row.role, row.content])).toEqual([
      ['user', 'look it up'],
      ['assistant', ''],
      ['tool', 'found look'],
      ['assistant', 'hello world'],
    ]);
    const turns = await sql<{ attempts: number; status: string }>`SELECT attempts, status FROM turns WHERE session_id = ${sessionId}`.execute(stack.database.db);
    expect(turns.rows).toEqual([{ attempts: 1, status: 'done' }]);
  }, 120_000);
});
