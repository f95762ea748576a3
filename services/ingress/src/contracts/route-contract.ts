import type { RouteShorthandOptions } from 'fastify';
import type { ZodType } from 'zod';

/**
 * One route's contract: what it takes (path parameters, query, body) and what it answers per status.
 * It is the route's Fastify `schema`, so the OpenAPI document (openapi-document.ts) is built from
 * the routes the server registered, and the handler parses its input with these same objects.
 * Error answers of any status share errorBody and need not be listed.
 */
export interface RouteContract {
  summary: string;
  tags: readonly string[];
  params?: ZodType;
  querystring?: ZodType;
  body?: ZodType;
  response: Readonly<Record<number, ZodType>>;
  /** The media type of the 2xx answer when it is not JSON (the Prometheus scrape). */
  produces?: string;
}

declare module 'fastify' {
  interface FastifySchema {
    summary?: string;
    tags?: readonly string[];
    produces?: string;
  }
}

/**
 * The handlers parse their own input with the contract's schemas, in the order they always did
 * (an unknown profile is a 404 before its body is read, each route words its 400), so Fastify's
 * own validation step passes the input through untouched; responses are JSON.stringify'd as for a
 * route without a schema (checked against the contract by installResponseCheck in tests).
 */
const passThrough = () => (data: unknown) => ({ value: data });
const stringify = () => (data: unknown) => JSON.stringify(data);

/** The route options that attach a contract: `app.get(url, withContract(c), handler)`. */
export function withContract(contract: RouteContract): RouteShorthandOptions {
  return { schema: contract, validatorCompiler: passThrough, serializerCompiler: stringify };
}

/** A route's contract as the server recorded it, when it has one. */
export function contractOf(schema: unknown): RouteContract | undefined {
  if (typeof schema !== 'object' || schema === null || !('response' in schema) || !('summary' in schema)) return undefined;
  return schema as RouteContract;
}
