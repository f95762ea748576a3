import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawRequest, startWalkableIngress } from '../support/ingress-app.ts';
import type { WalkableIngress } from '../support/ingress-app.ts';
import { personWithToken } from '../support/people.ts';
import type { TestPerson } from '../support/people.ts';
import { startStack } from '../support/stack.ts';
import type { Stack } from '../support/stack.ts';

/**
 * Issue 32, point 3: every registered route, walked with a personal token of each role, answers as
 * the route table in docs/security.md says: `no` is a 403, `yes` and `own` reach the route (its own
 * answer: 200, 400, 404...), never a 401 or 403. The table is read from the page, so the page and
 * the server cannot drift apart; and every registered route has a row, and a permission.
 */

const ROLES = ['admin', 'operator', 'member', 'viewer'] as const;
type Role = (typeof ROLES)[number];
type Cell = 'yes' | 'own' | 'no' | 'public';

function docTable(): Map<string, Record<Role, Cell>> {
  const page = readFileSync(new URL('../../docs/security.md', import.meta.url), 'utf8');
  const rows = new Map<string, Record<Role, Cell>>();
  for (const match of page.matchAll(/^\| `([A-Z*]+ \/[^`]*)` \| [^|]+ \| (\w+) \| (\w+) \| (\w+) \| (\w+) \|$/gm)) {
    const cells = match.slice(2, 6) as Cell[];
    rows.set(match[1] ?? '', { admin: cells[0] ?? 'no', operator: cells[1] ?? 'no', member: cells[2] ?? 'no', viewer: cells[3] ?? 'no' });
  }
  return rows;
}

const rowOf = (method: string, url: string) => (url === '/admin/queues' || url.startsWith('/admin/queues/') ? '* /admin/queues/*' : `${method === 'HEAD' ? 'GET' : method} ${url}`);

function concrete(pattern: string): string {
  return pattern
    .replace(/:id\b/g, randomUUID())
    .replace(/:profile\b/g, 'main')
    .replace(/:entry\b/g, '123456')
    .replace(/:[A-Za-z_]+/g, 'x')
    .replace(/\*$/, 'x');
}

describe('the route table by role (issue 32, point 3)', () => {
  let stack: Stack;
  let ingress: WalkableIngress;
  const people = new Map<Role, TestPerson>();
  const table = docTable();

  beforeAll(async () => {
    stack = await startStack({ workers: 0 });
    ingress = await startWalkableIngress(stack);
    for (const role of ROLES) people.set(role, await personWithToken(stack.database.db, `the ${role}`, [{ role, profiles: [] }]));
  });
  afterAll(async () => {
    await ingress?.close();
    await stack?.stop();
  });

  it('has a permission for every registered route and a row for it in docs/security.md', () => {
    expect(table.size).toBeGreaterThan(60);
    expect(ingress.routes.filter((route) => !route.listed).map((route) => `${route.method} ${route.url}`)).toEqual([]);
    const missing = ingress.routes.map((route) => rowOf(route.method, route.url)).filter((row) => !table.has(row));
    expect([...new Set(missing)]).toEqual([]);
    // And no row for a route that does not exist (the platforms' webhooks exist once a platform is configured).
    const registered = new Set(ingress.routes.map((route) => rowOf(route.method, route.url)));
    expect([...table.keys()].filter((row) => !registered.has(row) && !row.startsWith('POST /telegram') && !row.startsWith('POST /v1/slack/'))).toEqual([]);
  });

  it('answers every route with each role as the table says: no is a 403, yes and own reach the route', async () => {
    const wrong: string[] = [];
    let refused = 0;
    for (const route of ingress.routes) {
      const cells = table.get(rowOf(route.method, route.url));
      if (!cells || cells.admin === 'public') continue;
      const path = concrete(route.url);
      const body = ['POST', 'PUT', 'PATCH'].includes(route.method) ? '{}' : undefined;
      for (const role of ROLES) {
        const answer = await rawRequest(ingress.url, route.method, path, people.get(role)?.auth ?? {}, body);
        const denied = answer.status === 403 || answer.status === 401;
        const expected = cells[role] === 'no';
        if (denied) refused += 1;
        if (denied !== expected || answer.status >= 500) wrong.push(`${role} ${route.method} ${path}: ${answer.status} (table: ${cells[role]}) ${answer.body.slice(0, 160)}`);
        if (expected && answer.status !== 403) wrong.push(`${role} ${route.method} ${path}: ${answer.status}, expected 403`);
      }
    }
    expect(wrong).toEqual([]);
    // The walk did refuse things (viewers chatting, members reading the audit, operators editing hooks...).
    expect(refused).toBeGreaterThan(100);
  }, 300_000);

  it('refuses a wrong, malformed or revoked personal token with a 401 on every guarded route kind', async () => {
    const member = people.get('member');
    if (!member) throw new Error('no member');
    const forged = member.token.slice(0, -4) + (member.token.endsWith('AAAA') ? 'BBBB' : 'AAAA');
    for (const authorization of [`Bearer ${forged}`, 'Bearer hrd_00000000000000000000000000000000_' + 'A'.repeat(43), `Basic ${Buffer.from(`x:${member.token}`).toString('base64')}`]) {
      expect((await rawRequest(ingress.url, 'GET', '/v1/sessions', { authorization })).status, authorization).toBe(401);
    }
    expect((await rawRequest(ingress.url, 'GET', '/v1/sessions', member.auth)).status).toBe(200);
  });
});
