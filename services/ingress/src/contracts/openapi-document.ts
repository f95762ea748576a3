import { z } from 'zod';
import type { ZodType } from 'zod';
import { errorBody } from './common.ts';
import { contractOf } from './route-contract.ts';
import type { RouteContract } from './route-contract.ts';

/** A route as the server registered it (its onRoute hook), with its contract if it has one. */
export interface RecordedRoute {
  method: string;
  url: string;
  schema: unknown;
  public: boolean;
}

type JsonSchema = Record<string, unknown>;

/** zod to JSON Schema 2020-12, OpenAPI 3.1's dialect; what JSON cannot say (a transform) is left open. */
function jsonSchema(schema: ZodType, io: 'input' | 'output'): JsonSchema {
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { target: 'draft-2020-12', io, unrepresentable: 'any' }) as JsonSchema;
  return rest;
}

/** `/v1/sessions/:id` as OpenAPI writes it, `/v1/sessions/{id}`; a wildcard is the parameter `*`. */
export function openApiPath(url: string): string {
  return url.replace(/:([A-Za-z0-9_]+)/g, '{$1}').replace(/\*$/, '{*}');
}

function pathParameters(url: string): JsonSchema[] {
  const names = [...openApiPath(url).matchAll(/\{([^}]+)\}/g)].map((match) => match[1] ?? '');
  return names.map((name) => ({ name, in: 'path', required: true, schema: { type: 'string' } }));
}

function queryParameters(contract: RouteContract | undefined): JsonSchema[] {
  if (!contract?.querystring) return [];
  const schema = jsonSchema(contract.querystring, 'input');
  const properties = (schema.properties ?? {}) as Record<string, JsonSchema>;
  const required = new Set((schema.required ?? []) as string[]);
  return Object.entries(properties).map(([name, property]) => ({ name, in: 'query', required: required.has(name), schema: property }));
}

function responses(contract: RouteContract | undefined): JsonSchema {
  const error = { description: 'an error: `{error: {code, message, field?}}`', content: { 'application/json': { schema: jsonSchema(errorBody, 'output') } } };
  if (!contract) return { default: { description: 'not described by a contract (a bundled page or asset)' } };
  const listed = Object.entries(contract.response).map(([status, schema]) => {
    const media = Number(status) < 300 && contract.produces ? contract.produces : 'application/json';
    const content = Number(status) === 204 ? {} : { content: { [media]: { schema: jsonSchema(schema, 'output') } } };
    return [status, { description: contract.summary, ...content }];
  });
  return { ...Object.fromEntries(listed), default: error };
}

function operation(route: RecordedRoute, secured: boolean): JsonSchema {
  const contract = contractOf(route.schema);
  const body = contract?.body ? { requestBody: { required: true, content: { 'application/json': { schema: jsonSchema(contract.body, 'input') } } } } : {};
  return {
    summary: contract?.summary ?? `${route.method} ${route.url}`,
    tags: contract?.tags ?? ['assets'],
    operationId: `${route.method.toLowerCase()} ${route.url}`,
    parameters: [...pathParameters(route.url), ...queryParameters(contract)],
    ...body,
    responses: responses(contract),
    ...(secured && route.public ? { security: [] } : {}),
  };
}

/**
 * The OpenAPI 3.1 document of every route the server registered, built from the same zod
 * contracts the handlers parse with. With a token, the API is behind bearer auth except its
 * public routes (api-auth.ts PUBLIC_ROUTES).
 */
export function openApiDocument(routes: readonly RecordedRoute[], options: { secured: boolean; version: string }): JsonSchema {
  const paths: Record<string, Record<string, JsonSchema>> = {};
  for (const route of routes) {
    const path = openApiPath(route.url);
    paths[path] = { ...paths[path], [route.method.toLowerCase()]: operation(route, options.secured) };
  }
  return {
    openapi: '3.1.0',
    info: { title: 'Herald API', version: options.version, description: 'The HTTP API of a Herald cluster (docs/api.md).' },
    paths,
    components: { securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: 'HERALD_API_TOKEN' } } },
    ...(options.secured ? { security: [{ bearer: [] }] } : {}),
  };
}
