import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { addPerson, createLinkCode, createToken, redeemLinkCode } from '@herald/people';
import { createDb } from '@herald/db';
import { personWithToken } from '../support/people.ts';
import { startStack, TEST_TOKEN } from '../support/stack.ts';
import type { Stack } from '../support/stack.ts';

/**
 * Issue 32, point 2: personal tokens are stored only as a salted scrypt hash, expire, are revoked at
 * once, are limited per person, and HERALD_API_TOKEN is refused once an admin person exists when
 * HERALD_API_TOKEN_DISABLED is set.
 */
describe('personal API tokens', () => {
  let stack: Stack;
  const as = async (authorization: string | undefined, method: string, path: string, body?: unknown) => {
    const response = await fetch(`${stack.url}${path}`, {
      method,
      headers: { ...(authorization === undefined ? {} : { authorization }), ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const text = await response.text();
    return { status: response.status, body: text === '' ? null : JSON.parse(text) };
  };

  beforeAll(async () => {
    stack = await startStack({ workers: 0, env: { HERALD_API_TOKEN_DISABLED: 'true', HERALD_TOKENS_PER_PERSON: '3' } });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('keeps the bootstrap token working until an admin person exists, then refuses it', async () => {
    expect((await as(`Bearer ${TEST_TOKEN}`, 'GET', '/v1/people')).status).toBe(200);
    const created = await as(`Bearer ${TEST_TOKEN}`, 'POST', '/v1/people', { display_name: 'Ada', identities: ['api:ada'] });
    expect(created.status, JSON.stringify(created.body)).toBe(201);
    expect(created.body).toMatchObject({ display_name: 'Ada', key: 'api:ada', identities: ['api:ada'], grants: [] });
    const token = await as(`Bearer ${TEST_TOKEN}`, 'POST', '/v1/tokens', { person_id: created.body.id, name: 'laptop', expires: '30d' });
    expect(token.status).toBe(201);
    // Without a role the person is signed in, and may do nothing else.
    expect((await as(`Bearer ${token.body.token}`, 'GET', '/v1/sessions')).status).toBe(403);
    const granted = await as(`Bearer ${TEST_TOKEN}`, 'PATCH', `/v1/people/${created.body.id}`, { grants: [{ role: 'admin' }] });
    expect(granted.body.grants).toEqual([{ role: 'admin', profiles: [] }]);
    expect(token.body.token).toMatch(/^hrd_[0-9a-f]{32}_[A-Za-z0-9_-]{43}$/);
    expect(new Date(token.body.expires_at).getTime() - Date.now()).toBeGreaterThan(29 * 86_400_000);
    // Now an admin person exists: the bootstrap token is off, the person's token is the way in.
    expect((await as(`Bearer ${TEST_TOKEN}`, 'GET', '/v1/people')).status).toBe(401);
    const people = await as(`Bearer ${token.body.token}`, 'GET', '/v1/people');
    expect(people.status).toBe(200);
    expect(people.body.people.map((p: { display_name: string }) => p.display_name)).toEqual(['Ada']);
    const detail = await as(`Bearer ${token.body.token}`, 'GET', `/v1/people/${created.body.id}`);
    expect(detail.body.tokens).toHaveLength(1);
    expect(detail.body.tokens[0].last_used_at).not.toBeNull();
    expect(JSON.stringify(detail.body)).not.toContain(token.body.token.split('_').slice(2).join('_'));
  });

  it('stores no usable token: only a salted scrypt hash, different for equal-looking tokens', async () => {
    const db = stack.database.db;
    const person = await addPerson(db, { displayName: 'Hash' }, 'test');
    const one = await createToken(db, { personId: person.id, maxPerPerson: 10 }, 'test');
    const two = await createToken(db, { personId: person.id, maxPerPerson: 10 }, 'test');
    const secret = one.token.split('_').slice(2).join('_');
    const { rows } = await sql<{ row: string }>`SELECT row_to_json(t)::text AS row FROM api_tokens t`.execute(db);
    for (const { row } of rows) {
      expect(row).not.toContain(secret);
      expect(row).not.toContain(Buffer.from(secret).toString('hex'));
    }
    const stored = await db.selectFrom('api_tokens').select(['id', 'salt', 'hash']).where('id', 'in', [one.id, two.id]).execute();
    expect(stored.map((r) => r.hash.length)).toEqual([32, 32]);
    expect(stored[0]?.salt.equals(stored[1]?.salt ?? Buffer.alloc(0))).toBe(false);
    // The hash is not the token: presenting it (in any spelling) opens nothing.
    const row = stored.find((r) => r.id === one.id);
    const forged = `hrd_${one.id.replace(/-/g, '')}_${row?.hash.toString('base64url').slice(0, 43)}`;
    expect((await as(`Bearer ${forged}`, 'GET', `/v1/people/${person.id}`)).status).toBe(401);
    expect((await as(`Bearer ${one.token}`, 'GET', `/v1/people/${person.id}`)).status).toBe(200);
  });

  it('refuses an expired token and a revoked one at once', async () => {
    const db = stack.database.db;
    const member = await personWithToken(db, 'Mia', [{ role: 'member', profiles: [] }]);
    const short = await createToken(db, { personId: member.person.id, expiresInMs: 1000, maxPerPerson: 10 }, 'test');
    expect((await as(`Bearer ${short.token}`, 'GET', '/v1/sessions')).status).toBe(200);
    await new Promise((resolve) => setTimeout(resolve, 1300));
    expect((await as(`Bearer ${short.token}`, 'GET', '/v1/sessions')).status).toBe(401);

    expect((await as(member.auth.authorization, 'GET', '/v1/sessions')).status).toBe(200);
    const tokenId = (await db.selectFrom('api_tokens').select('id').where('person_id', '=', member.person.id).orderBy('created_at').executeTakeFirstOrThrow()).id;
    expect((await as(member.auth.authorization, 'DELETE', `/v1/tokens/${tokenId}`)).status).toBe(204);
    expect((await as(member.auth.authorization, 'GET', '/v1/sessions')).status).toBe(401);
    const revoked = await db.selectFrom('api_tokens').select('revoked_at').where('id', '=', tokenId).executeTakeFirstOrThrow();
    expect(revoked.revoked_at).not.toBeNull();
  });

  it('limits live tokens per person (HERALD_TOKENS_PER_PERSON), and keeps members to their own tokens', async () => {
    const db = stack.database.db;
    const member = await personWithToken(db, 'Max', [{ role: 'member', profiles: [] }]);
    const other = await personWithToken(db, 'Olga', [{ role: 'member', profiles: [] }]);
    // Own tokens: person_id defaults to the caller; two more reach the limit of 3.
    expect((await as(member.auth.authorization, 'POST', '/v1/tokens', { name: 'phone' })).status).toBe(201);
    expect((await as(member.auth.authorization, 'POST', '/v1/tokens', { person_id: member.person.id })).status).toBe(201);
    const over = await as(member.auth.authorization, 'POST', '/v1/tokens', {});
    expect(over.status).toBe(409);
    expect(over.body.error.message).toContain('HERALD_TOKENS_PER_PERSON');
    expect((await as(member.auth.authorization, 'POST', '/v1/tokens', { person_id: other.person.id })).status).toBe(403);
    const othersToken = await db.selectFrom('api_tokens').select('id').where('person_id', '=', other.person.id).executeTakeFirstOrThrow();
    expect((await as(member.auth.authorization, 'DELETE', `/v1/tokens/${othersToken.id}`)).status).toBe(404);
    expect((await as(member.auth.authorization, 'GET', `/v1/people/${other.person.id}`)).status).toBe(404);
    expect((await as(member.auth.authorization, 'GET', '/v1/people')).status).toBe(403);
    expect((await as(other.auth.authorization, 'GET', '/v1/sessions')).status).toBe(200);
    // Bad input is a 400 naming the field, and writes nothing.
    const bad = await as(member.auth.authorization, 'POST', '/v1/tokens', { expires: 'soon' });
    expect(bad.status).toBe(400);
    expect(bad.body.error.field).toBe('expires');
  });

  it("holds the token limit and a link code's one use under parallel requests from separate connections", async () => {
    const db = stack.database.db;
    const racer = await personWithToken(db, 'Rita', [{ role: 'member', profiles: [] }]);
    // One token held; six more asked for at once against a limit of three: exactly two pass.
    const answers = await Promise.all(Array.from({ length: 6 }, () => as(racer.auth.authorization, 'POST', '/v1/tokens', {})));
    expect(answers.map((a) => a.status).sort()).toEqual([201, 201, 409, 409, 409, 409]);

    const code = await createLinkCode(db, racer.person.id, 'test');
    const pools = Array.from({ length: 5 }, () => createDb({ url: stack.database.url, maxConnections: 1 }));
    try {
      const outcomes = await Promise.all(pools.map((pool, i) => redeemLinkCode(pool, code.code, `api:racer-${i}`)));
      expect(outcomes.filter((o) => o.kind === 'linked')).toHaveLength(1);
      expect(outcomes.filter((o) => o.kind === 'invalid')).toHaveLength(4);
    } finally {
      await Promise.all(pools.map((pool) => pool.destroy()));
    }
    const linked = await db.selectFrom('person_identities').select('identity').where('person_id', '=', racer.person.id).execute();
    expect(linked).toHaveLength(2);
  });
});
