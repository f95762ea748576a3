import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Validator } from '@seriousme/openapi-schema-validator';
import { z } from 'zod';
import { silentLogger } from '@herald/core';
import { modelSettingsSchema } from '@herald/profiles';
import { createIngressServer, openApiPath, recordedRoutes, withContract } from '@herald/ingress';
import type { FastifyInstance } from 'fastify';
import { TurnDoneListener } from '@herald/queue';
import { startWalkableIngress } from './support/ingress-app.ts';
import type { WalkableIngress } from './support/ingress-app.ts';
import { replicaOf, startStack } from './support/stack.ts';
import type { Replica, Stack } from './support/stack.ts';

// Issue 30, point 5: one contract per route. The document is built from the zod schemas the
// routes carry; the test stack holds every JSON answer to its route's schema (installResponseCheck),
// so the API tests at large validate responses too, and this file checks that the check bites.

type OpenApi = { openapi: string; paths: Record<string, Record<string, { responses: Record<string, unknown> }>> };

/** A server on the stack's storage, built with the given token (undefined: the API is open). */
async function serverWith(stack: Stack, replica: Replica, token: string | undefined): Promise<FastifyInstance> {
  const listener = new TurnDoneListener(replica.deps.notices, stack.config.redis.queuePrefix);
  const config = { ...stack.config, api: { ...stack.config.api, token } };
  return createIngressServer({ config, db: replica.deps.db, queue: replica.deps.queue, notices: replica.deps.notices, listener, logger: silentLogger, checkResponses: true });
}

describe('route contracts and GET /v1/openapi.json (issue 30, point 5)', () => {
  let stack: Stack;
  let ingress: WalkableIngress;
  let replica: Replica;
  let document: OpenApi;

  beforeAll(async () => {
    stack = await startStack();
    ingress = await startWalkableIngress(stack);
    replica = replicaOf(stack);
    const response = await fetch(`${ingress.url}/v1/openapi.json`, { headers: { authorization: `Bearer ${stack.config.api.token}` } });
    expect(response.status).toBe(200);
    document = (await response.json()) as OpenApi;
  }, 60_000);

  afterAll(async () => {
    await ingress?.close();
    await replica?.close();
    await stack?.stop();
  });

  it('serves a document that validates as OpenAPI 3.1', async () => {
    expect(document.openapi).toBe('3.1.0');
    const validator = new Validator();
    const result = await validator.validate(structuredClone(document) as unknown as Parameters<Validator['validate']>[0]);
    expect(result.errors ?? []).toEqual([]);
    expect(result.valid).toBe(true);
    expect(validator.version).toBe('3.1');
  });

  it('lists every route the server registers, each method under its path', () => {
    expect(ingress.routes.length).toBeGreaterThan(50);
    const missing = ingress.routes.filter((route) => document.paths[openApiPath(route.url)]?.[route.method.toLowerCase()] === undefined);
    expect(missing).toEqual([]);
    const listed = Object.values(document.paths).reduce((sum, operations) => sum + Object.keys(operations).length, 0);
    expect(listed).toBe(new Set(ingress.routes.map((route) => `${route.method} ${route.url}`)).size);
  });

  it('gives every /v1 route and the probes a contract with a response schema', () => {
    const bare = ingress.routes
      .filter((route) => !route.url.startsWith('/admin/queues') && !route.url.startsWith('/ui'))
      .filter((route) => {
        const operation = document.paths[openApiPath(route.url)]?.[route.method.toLowerCase()];
        return operation === undefined || Object.keys(operation.responses).every((status) => status === 'default');
      });
    expect(bare).toEqual([]);
    const post = document.paths['/v1/messages']?.post as unknown as { requestBody: { content: Record<string, { schema: { required: string[] } }> } };
    expect(post.requestBody.content['application/json']?.schema.required).toEqual(expect.arrayContaining(['chat_id', 'user_id', 'text']));
  });

  it("shows a profile's models with the fields @herald/profiles' rules have (the view the console reads is zod alone)", () => {
    // The first object schema with a `primary` property: the model settings, however nullable wraps them.
    const modelFields = (schema: unknown): string[] | undefined => {
      if (typeof schema !== 'object' || schema === null) return undefined;
      const properties = (schema as { properties?: Record<string, unknown> }).properties;
      if (properties && 'primary' in properties) return Object.keys(properties).sort();
      for (const value of Object.values(schema)) {
        const found = modelFields(value);
        if (found) return found;
      }
      return undefined;
    };
    const rules = Object.keys(modelSettingsSchema.shape).sort();
    expect(modelFields(document.paths['/v1/profiles']?.get)).toEqual(rules);
    expect(modelFields(document.paths['/v1/profiles/{profile}']?.get)).toEqual(rules);
  });

  it('keeps the document behind the token when there is one, and open when the API is open', async () => {
    expect((await fetch(`${ingress.url}/v1/openapi.json`)).status).toBe(401);
    const open = await serverWith(stack, replica, undefined);
    try {
      const response = await open.inject({ method: 'GET', url: '/v1/openapi.json' });
      expect(response.statusCode).toBe(200);
      const body = response.json() as OpenApi & { security?: unknown };
      expect(body.openapi).toBe('3.1.0');
      expect(body.security).toBeUndefined();
      expect(Object.keys(body.paths)).toContain('/v1/sessions/{id}');
    } finally {
      await open.close();
    }
  });

  it('answers routes within their schemas, and turns an answer outside its schema into a 500 that says why', async () => {
    const created = await stack.post('/v1/messages', { chat_id: 'contracts', user_id: 'u1', text: 'hello' });
    expect(created.status).toBe(202);
    for (const path of [
      `/v1/sessions/${created.body.session_id}`,
      '/v1/sessions',
      `/v1/sessions/${created.body.session_id}/messages`,
      '/v1/profiles/main',
      '/v1/admin/status',
      '/v1/cron/jobs',
      '/v1/audit',
      '/v1/runs',
    ]) {
      const answer = await stack.get(path);
      expect(answer.status, `${path}: ${JSON.stringify(answer.body)}`).toBe(200);
    }
    const server = await serverWith(stack, replica, undefined);
    try {
      const contract = { summary: 'a route that breaks its contract', tags: ['test'], response: { 200: z.object({ count: z.number() }) } };
      server.get('/v1/test/broken', withContract(contract), async () => ({ count: 'three' }));
      const broken = await server.inject({ method: 'GET', url: '/v1/test/broken' });
      expect(broken.statusCode).toBe(500);
      expect(broken.json().error.message).toMatch(/response contract: GET \/v1\/test\/broken 200/);
      expect(recordedRoutes(server).some((route) => route.url === '/v1/test/broken')).toBe(true);
    } finally {
      await server.close();
    }
  });
});
