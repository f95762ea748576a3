import type { FastifyInstance, FastifyReply } from 'fastify';
import { z } from 'zod';
import type { Db } from '@herald/db';
import { addPerson, createLinkCode, createToken, getPerson, grantRole, listPeople, listTokens, parseDuration, PeopleError, removePerson, revokeRole, revokeToken, updatePerson } from '@herald/people';
import type { Grant, Person, TokenView } from '@herald/people';
import { sendError, sendInvalid } from './api-errors.ts';
import { principalOfRequest } from './api-auth.ts';
import { withContract } from './contracts/route-contract.ts';
import { idParams, noContent } from './contracts/common.ts';
import { createdToken, linkCodeView, peopleList, personDetail, personView, roleName } from './contracts/people-views.ts';

const grantInput = z.strictObject({ role: roleName, profiles: z.array(z.string().min(1).max(64)).max(100).default([]) });
const identities = z.array(z.string().min(1).max(256)).max(50);

const createPersonBody = z.strictObject({
  display_name: z.string({ error: 'is required' }).trim().min(1).max(200),
  identities: identities.optional(),
  grants: z.array(grantInput).max(4).optional(),
});

const patchPersonBody = z.strictObject({
  display_name: z.string().trim().min(1).max(200).optional(),
  link: identities.optional(),
  unlink: identities.optional(),
  /** The whole set of grants: roles left out are revoked. */
  grants: z.array(grantInput).max(4).optional(),
});

const createTokenBody = z.strictObject({
  person_id: z.string({ error: 'is required' }).min(1).max(64),
  name: z.string().max(100).optional(),
  /** `30d`, `12h`, `90m`, `2w`; without it the token does not expire. */
  expires: z
    .string()
    .refine((value) => parseDuration(value) !== undefined, { error: 'expected a duration such as 30d, 12h or 90m' })
    .optional(),
});

export function personJson(person: Person) {
  return {
    id: person.id,
    display_name: person.displayName,
    key: person.key,
    identities: person.identities,
    grants: person.grants.map((g) => ({ role: g.role, profiles: [...g.profiles] })),
    created_at: person.createdAt.toISOString(),
    updated_at: person.updatedAt.toISOString(),
  };
}

export function tokenJson(token: TokenView) {
  return {
    id: token.id,
    person_id: token.personId,
    name: token.name,
    created_at: token.createdAt.toISOString(),
    expires_at: token.expiresAt?.toISOString() ?? null,
    last_used_at: token.lastUsedAt?.toISOString() ?? null,
    revoked_at: token.revokedAt?.toISOString() ?? null,
  };
}

/** A refused change as the API answers it: the status and field PeopleError carries. */
async function refusing<T>(reply: FastifyReply, change: () => Promise<T>): Promise<T | FastifyReply> {
  try {
    return await change();
  } catch (error) {
    if (!(error instanceof PeopleError)) throw error;
    return sendError(reply, error.status, error.status === 404 ? 'not_found' : error.status === 409 ? 'conflict' : 'invalid_request', error.message, error.field);
  }
}

/** Replaces a person's grants with `wanted`: grants each, revokes the roles left out. */
async function setGrants(db: Db, person: Person, wanted: readonly Grant[], actor: string): Promise<void> {
  for (const grant of wanted) await grantRole(db, person.id, grant, actor);
  for (const held of person.grants) if (!wanted.some((g) => g.role === held.role)) await revokeRole(db, person.id, held.role, actor);
}

function registerPersonRoutes(app: FastifyInstance, db: Db): void {
  app.get('/v1/people', withContract({ summary: 'People', tags: ['people'], response: { 200: peopleList } }), async () => ({ people: (await listPeople(db)).map(personJson) }));

  app.post('/v1/people', withContract({ summary: 'Add a person with identities and role grants', tags: ['people'], body: createPersonBody, response: { 201: personView } }), async (request, reply) => {
    const parsed = createPersonBody.safeParse(request.body ?? {});
    if (!parsed.success) return sendInvalid(reply, parsed.error);
    const actor = principalOfRequest(request).key;
    return refusing(reply, async () => {
      const person = await addPerson(db, { displayName: parsed.data.display_name, identities: parsed.data.identities, grants: parsed.data.grants }, actor);
      return reply.code(201).send(personJson(person));
    });
  });

  app.get<{ Params: { id: string } }>(
    '/v1/people/:id',
    withContract({ summary: 'A person, with their tokens', tags: ['people'], params: idParams, response: { 200: personDetail } }),
    async (request, reply) => {
      const person = await getPerson(db, request.params.id);
      if (!person) return sendError(reply, 404, 'not_found', 'no such person');
      return { ...personJson(person), tokens: (await listTokens(db, person.id)).map(tokenJson) };
    },
  );

  app.patch<{ Params: { id: string } }>(
    '/v1/people/:id',
    withContract({ summary: 'Rename, link or unlink identities, set role grants', tags: ['people'], params: idParams, body: patchPersonBody, response: { 200: personView } }),
    async (request, reply) => {
      const parsed = patchPersonBody.safeParse(request.body ?? {});
      if (!parsed.success) return sendInvalid(reply, parsed.error);
      const actor = principalOfRequest(request).key;
      return refusing(reply, async () => {
        const person = await updatePerson(db, request.params.id, { displayName: parsed.data.display_name, link: parsed.data.link, unlink: parsed.data.unlink }, actor);
        if (parsed.data.grants !== undefined) await setGrants(db, person, parsed.data.grants, actor);
        const now = await getPerson(db, person.id);
        return now ? personJson(now) : sendError(reply, 404, 'not_found', 'no such person');
      });
    },
  );

  app.delete<{ Params: { id: string } }>(
    '/v1/people/:id',
    withContract({ summary: 'Remove a person (their data stays; herald people erase removes it)', tags: ['people'], params: idParams, response: { 204: noContent } }),
    async (request, reply) => {
      const actor = principalOfRequest(request).key;
      return refusing(reply, async () => {
        await removePerson(db, request.params.id, actor);
        return reply.code(204).send();
      });
    },
  );

  app.post<{ Params: { id: string } }>(
    '/v1/people/:id/link-code',
    withContract({ summary: 'A one-time code that links a chat identity with /link CODE (10 minutes)', tags: ['people'], params: idParams, response: { 201: linkCodeView } }),
    async (request, reply) => {
      const actor = principalOfRequest(request).key;
      return refusing(reply, async () => {
        const code = await createLinkCode(db, request.params.id, actor);
        return reply.code(201).send({ code: code.code, person_id: code.personId, expires_at: code.expiresAt.toISOString() });
      });
    },
  );
}

function registerTokenRoutes(app: FastifyInstance, db: Db, maxPerPerson: number): void {
  app.post('/v1/tokens', withContract({ summary: 'Create a personal API token (shown once)', tags: ['people'], body: createTokenBody, response: { 201: createdToken } }), async (request, reply) => {
    const parsed = createTokenBody.safeParse(request.body ?? {});
    if (!parsed.success) return sendInvalid(reply, parsed.error);
    const actor = principalOfRequest(request).key;
    const expiresInMs = parsed.data.expires === undefined ? undefined : parseDuration(parsed.data.expires);
    return refusing(reply, async () => {
      const created = await createToken(db, { personId: parsed.data.person_id, name: parsed.data.name, expiresInMs, maxPerPerson }, actor);
      reply.header('cache-control', 'no-store');
      return reply.code(201).send({ ...tokenJson(created), token: created.token });
    });
  });

  app.delete<{ Params: { id: string } }>(
    '/v1/tokens/:id',
    withContract({ summary: 'Revoke a personal API token', tags: ['people'], params: idParams, response: { 204: noContent } }),
    async (request, reply) => {
      const actor = principalOfRequest(request).key;
      return refusing(reply, async () => {
        await revokeToken(db, request.params.id, actor);
        return reply.code(204).send();
      });
    },
  );
}

/** GET/POST/PATCH/DELETE /v1/people, link codes, POST /v1/tokens and DELETE /v1/tokens/:id. */
export function registerPeopleRoutes(app: FastifyInstance, db: Db, options: { tokensPerPerson: number }): void {
  registerPersonRoutes(app, db);
  registerTokenRoutes(app, db, options.tokensPerPerson);
}
