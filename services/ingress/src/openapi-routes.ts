import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { ZodType } from 'zod';
import { routeAccess } from './api-auth.ts';
import { openApiDocument } from './contracts/openapi-document.ts';
import type { RecordedRoute } from './contracts/openapi-document.ts';
import { errorBody } from './contracts/common.ts';
import { contractOf, withContract } from './contracts/route-contract.ts';

export const OPENAPI_PATH = '/v1/openapi.json';

/** The API's version as the document states it: the contract's, not the package's. */
const API_VERSION = '1';

const RECORDED = new WeakMap<FastifyInstance, RecordedRoute[]>();

/** Every route the server registered, with the schema it was given (what the contract test walks). */
export function recordedRoutes(app: FastifyInstance): readonly RecordedRoute[] {
  return RECORDED.get(app) ?? [];
}

const openApiContract = {
  summary: 'This API as an OpenAPI 3.1 document',
  tags: ['meta'],
  response: { 200: z.object({ openapi: z.literal('3.1.0'), info: z.object({ title: z.string(), version: z.string() }), paths: z.record(z.string(), z.unknown()) }).loose() },
};

/**
 * Records every route as it is registered and serves `GET /v1/openapi.json` built from them. The
 * document is an ordinary /v1 route: open when the API is (no HERALD_API_TOKEN), behind the token
 * otherwise. Install before registering routes.
 */
export function installOpenApi(app: FastifyInstance, token: string | undefined): void {
  const routes: RecordedRoute[] = [];
  RECORDED.set(app, routes);
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) routes.push({ method, url: route.url, schema: route.schema, public: routeAccess(route.url) === 'public' });
  });
  let document: Record<string, unknown> | undefined;
  app.get(OPENAPI_PATH, withContract(openApiContract), async () => {
    // Built once, on first ask: every route is registered by the time the server answers.
    document ??= openApiDocument(routes, { secured: token !== undefined, version: API_VERSION });
    return document;
  });
}

/**
 * Checks every JSON answer against its route's contract before it is sent. A mismatch becomes a
 * 500 that says what did not match, so the test that met it shows why. For tests and development:
 * in production the contract is held by those tests, not re-checked on every reply.
 */
export function installResponseCheck(app: FastifyInstance): void {
  app.addHook('preSerialization', async (request, reply, payload) => {
    const contract = contractOf(request.routeOptions.schema);
    if (!contract) return payload;
    const where = `${request.method} ${request.routeOptions.url ?? request.url} ${reply.statusCode}`;
    const schema = contract.response[reply.statusCode] ?? (reply.statusCode >= 400 ? errorBody : undefined);
    const problem = schema === undefined ? 'no schema for this status' : contractProblem(schema, payload);
    if (problem === undefined) return payload;
    reply.code(500);
    return { error: { code: 'internal', message: `response contract: ${where}: ${problem}` } };
  });
}

function contractProblem(schema: ZodType, payload: unknown): string | undefined {
  const checked = schema.safeParse(payload);
  return checked.success ? undefined : z.prettifyError(checked.error);
}
