import type { FastifyInstance, FastifyReply } from 'fastify';
import { findUnstorable, hasUnstorable, isUuid } from '@herald/core';
import { sendError } from './api-errors.ts';

/** Route parameters that name a stored row, and what a well-formed one looks like. */
const ID_PARAMS: Record<string, { valid: (value: string) => boolean; expected: string }> = {
  id: { valid: isUuid, expected: 'expected an id (a UUID)' },
  entry: { valid: (value) => /^[1-9][0-9]{0,17}$/.test(value), expected: 'expected a memory entry id (a whole number)' },
};

const UNSTORABLE_MESSAGE = 'contains a character that cannot be stored (NUL or an unpaired UTF-16 surrogate)';

/**
 * Deepest nesting of objects and arrays a body may have. No route takes more than a handful of
 * levels; a body nested thousands deep would overflow the stack of every recursive walk after
 * the parser (these checks, schema validation, serialisation) and answer 500.
 */
export const MAX_JSON_DEPTH = 64;

/** Whether `value` nests objects or arrays deeper than `max`; walked with a queue, so any depth is safe to measure. */
export function nestedDeeperThan(value: unknown, max: number): boolean {
  let level: unknown[] = [value];
  for (let depth = 0; level.length > 0; depth += 1) {
    const containers = level.filter((item): item is object => typeof item === 'object' && item !== null);
    if (containers.length === 0) return false;
    if (depth >= max) return true;
    level = containers.flatMap((item) => Object.values(item));
  }
  return false;
}

function refuseUnstorable(reply: FastifyReply, field: string): FastifyReply {
  return sendError(reply, 400, 'invalid_request', `${field}: ${UNSTORABLE_MESSAGE}`, field);
}

/**
 * Input hygiene for every route, before its handler: an id in the path that is not well formed is a
 * 400 naming the parameter (a well-formed unknown one is the handler's 404), and a NUL or unpaired
 * surrogate anywhere in the path, the query string or the JSON body (keys included) is a 400 naming
 * the field; a body nested deeper than MAX_JSON_DEPTH is a 400 too. Nothing reaches Postgres that
 * it would refuse with an error. The Telegram webhook is
 * platform data: it is answered 200 and such characters are stripped when the message is stored.
 */
export function installInputHygiene(app: FastifyInstance, platformRoutes: readonly string[]): void {
  app.addHook('preValidation', async (request, reply) => {
    if (platformRoutes.includes(request.routeOptions.url ?? '')) return undefined;
    for (const [name, value] of Object.entries((request.params ?? {}) as Record<string, string>)) {
      if (hasUnstorable(value)) return refuseUnstorable(reply, name);
      const rule = ID_PARAMS[name];
      if (rule && !rule.valid(value)) return sendError(reply, 400, 'invalid_request', `${name}: ${rule.expected}`, name);
    }
    if (nestedDeeperThan(request.body ?? null, MAX_JSON_DEPTH)) {
      return sendError(reply, 400, 'invalid_request', `body: nested deeper than ${MAX_JSON_DEPTH} levels of objects and arrays`, 'body');
    }
    const inQuery = findUnstorable(request.query ?? {});
    if (inQuery !== undefined) return refuseUnstorable(reply, inQuery.length === 0 ? 'query' : inQuery.join('.'));
    const inBody = findUnstorable(request.body ?? null);
    if (inBody !== undefined) return refuseUnstorable(reply, inBody.length === 0 ? 'body' : inBody.join('.'));
    return undefined;
  });
}
