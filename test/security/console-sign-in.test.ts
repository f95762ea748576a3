import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext } from 'playwright-core';
import { sql } from 'kysely';
import { personOfIdentity } from '@herald/people';
import { buildConsole, launchChromium } from '../support/browser.ts';
import { freePort } from '../support/mcp-servers.ts';
import { startOidcIssuer } from '../support/oidc-issuer.ts';
import type { OidcIssuer } from '../support/oidc-issuer.ts';
import { personWithToken } from '../support/people.ts';
import type { TestPerson } from '../support/people.ts';
import { startStack } from '../support/stack.ts';
import type { Stack } from '../support/stack.ts';

/**
 * Issue 32, point 4: console sign-in for people. A personal token or single sign-on through a real
 * OpenID provider (the oidc-provider package, its development login form driven in headless
 * Chromium) ends in a server-side session held by an HttpOnly, SameSite=Strict cookie; state-changing
 * calls need its CSRF token; signing out ends it on the server.
 */
describe('console sign-in', () => {
  let issuer: OidcIssuer;
  let stack: Stack;
  let browser: Browser;
  let ana: TestPerson;

  beforeAll(async () => {
    await buildConsole();
    const port = await freePort();
    const url = `http://127.0.0.1:${port}`;
    issuer = await startOidcIssuer(() => `${url}/v1/auth/oidc/callback`, {
      ana: { email: 'ana@example.com', name: 'Ana Lima', groups: ['herald-ops'] },
      bea: { email: 'bea@example.com', name: 'Bea' },
      mallory: { email: 'mallory@evil.test', name: 'Mallory' },
    });
    stack = await startStack({
      env: {
        PORT: String(port),
        HERALD_URL: url,
        HERALD_OIDC_ISSUER: issuer.url,
        HERALD_OIDC_CLIENT_ID: issuer.clientId,
        HERALD_OIDC_CLIENT_SECRET: issuer.clientSecret,
        HERALD_OIDC_ALLOWED_DOMAINS: 'example.com',
        HERALD_OIDC_ROLES: 'herald-ops=operator',
      },
    });
    ana = await personWithToken(stack.database.db, 'Ana by token', [{ role: 'member', profiles: [] }], ['api:ana']);
    browser = await launchChromium();
  }, 240_000);
  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
    await issuer?.close();
  });

  const cookieOf = (response: Response) => response.headers.getSetCookie().find((line) => line.startsWith('herald_session='));

  it('signs in with a personal token: an HttpOnly, SameSite=Strict cookie, a CSRF token for changes, signed out on the server', async () => {
    const signIn = await fetch(`${stack.url}/v1/auth/sign-in`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token: ana.token }) });
    expect(signIn.status).toBe(200);
    const body = (await signIn.json()) as { person: { id: string }; csrf_token: string; via: string };
    expect(body).toMatchObject({ person: { id: ana.person.id }, via: 'token' });
    const setCookie = cookieOf(signIn)!;
    expect(setCookie).toMatch(/HttpOnly/);
    expect(setCookie).toMatch(/SameSite=Strict/);
    expect(setCookie).not.toMatch(/Secure/); // served over http here; HERALD_URL https makes it Secure
    const cookie = setCookie.split(';')[0]!;
    const secret = decodeURIComponent(cookie.slice('herald_session='.length));
    // Only a hash is stored: no row holds the cookie's value.
    const stored = await sql<{ n: number }>`SELECT count(*)::int AS n FROM console_sessions WHERE position(${secret}::text IN encode(secret_hash, 'escape')) > 0`.execute(stack.database.db);
    expect(stored.rows[0]?.n).toBe(0);

    const me = await fetch(`${stack.url}/v1/auth/session`, { headers: { cookie } });
    expect(me.status).toBe(200);
    expect(await me.json()).toMatchObject({ person: { id: ana.person.id }, csrf_token: body.csrf_token });
    // A change without the CSRF token (what a form on another site would send) is refused.
    const forged = await fetch(`${stack.url}/v1/messages`, { method: 'POST', headers: { cookie, 'content-type': 'application/json' }, body: JSON.stringify({ chat_id: 'c1', text: 'hi' }) });
    expect(forged.status).toBe(403);
    const sent = await fetch(`${stack.url}/v1/messages`, {
      method: 'POST',
      headers: { cookie, 'content-type': 'application/json', 'x-herald-csrf': body.csrf_token },
      body: JSON.stringify({ chat_id: 'c1', text: 'hi' }),
    });
    expect(sent.status).toBe(202);

    const out = await fetch(`${stack.url}/v1/auth/session`, { method: 'DELETE', headers: { cookie, 'x-herald-csrf': body.csrf_token } });
    expect(out.status).toBe(204);
    expect(cookieOf(out)).toMatch(/Max-Age=0/);
    // The same cookie, replayed after signing out, signs nobody in.
    expect((await fetch(`${stack.url}/v1/auth/session`, { headers: { cookie } })).status).toBe(401);
  });

  it('refuses a token that is not a personal token', async () => {
    const response = await fetch(`${stack.url}/v1/auth/sign-in`, { method: 'POST', headers: { 'content-type': 'application/json' }, body: JSON.stringify({ token: 'hrd_nope_nope' }) });
    expect(response.status).toBe(401);
    expect(cookieOf(response)).toBeUndefined();
  });

  /** Drives the provider's pages as a person would: its login form (unless it remembers them), its consent, back to the console. */
  async function signInThroughProvider(context: BrowserContext, login: string): Promise<string> {
    const page = await context.newPage();
    page.setDefaultTimeout(20_000);
    await page.goto(`${stack.url}/v1/auth/oidc/login`);
    for (let step = 0; step < 4 && !new URL(page.url()).pathname.startsWith('/ui/'); step++) {
      const form = page.locator('input[name="login"]');
      if (await form.count()) {
        await form.fill(login);
        await page.locator('input[name="password"]').fill('any password');
      }
      await Promise.all([page.waitForNavigation(), page.locator('button[type="submit"]').first().click()]);
    }
    const landed = page.url();
    await page.close();
    return landed;
  }

  it('signs in through the OpenID provider (PKCE): a first sign-in creates the person with the mapped role', async () => {
    const context = await browser.newContext();
    const landed = await signInThroughProvider(context, 'ana');
    expect(landed).not.toContain('signin_error');
    const session = (await context.cookies()).find((cookie) => cookie.name === 'herald_session');
    expect(session).toMatchObject({ httpOnly: true, sameSite: 'Strict' });
    const person = await personOfIdentity(stack.database.db, 'oidc:ana');
    expect(person).toMatchObject({ displayName: 'Ana Lima', grants: [{ role: 'operator', profiles: [] }] });
    // The page's own calls carry the cookie: who am I, then a change with the CSRF token.
    const page = await context.newPage();
    await page.goto(`${stack.url}/ui/`);
    const me = (await page.evaluate(async () => (await fetch('/v1/auth/session')).json())) as { csrf_token: string };
    expect(me).toMatchObject({ person: { id: person!.id }, via: 'oidc' });
    const out = await page.evaluate(async (csrf: string) => (await fetch('/v1/auth/session', { method: 'DELETE', headers: { 'x-herald-csrf': csrf } })).status, me.csrf_token as string);
    expect(out).toBe(204);
    expect(await page.evaluate(async () => (await fetch('/v1/auth/session')).status)).toBe(401);
    await context.close();
  });

  it('gives a first sign-in without a mapped group the member role, and keeps the person on the next sign-in', async () => {
    const context = await browser.newContext();
    await signInThroughProvider(context, 'bea');
    await signInThroughProvider(context, 'bea');
    const person = await personOfIdentity(stack.database.db, 'oidc:bea');
    expect(person?.grants).toEqual([{ role: 'member', profiles: [] }]);
    const count = await sql<{ n: number }>`SELECT count(*)::int AS n FROM person_identities WHERE identity = 'oidc:bea'`.execute(stack.database.db);
    expect(count.rows[0]?.n).toBe(1);
    await context.close();
  });

  it('refuses an address outside HERALD_OIDC_ALLOWED_DOMAINS: no person, no session, the reason on the console', async () => {
    const context = await browser.newContext();
    const landed = await signInThroughProvider(context, 'mallory');
    expect(decodeURIComponent(landed)).toContain('addresses at evil.test may not sign in here');
    expect((await context.cookies()).find((cookie) => cookie.name === 'herald_session')).toBeUndefined();
    expect(await personOfIdentity(stack.database.db, 'oidc:mallory')).toBeUndefined();
    await context.close();
  });

  it('refuses a callback whose state was not started in this browser', async () => {
    const response = await fetch(`${stack.url}/v1/auth/oidc/callback?code=forged&state=forged`, { redirect: 'manual' });
    expect(response.status).toBe(303);
    expect(decodeURIComponent(response.headers.get('location') ?? '')).toContain('start again');
    expect(cookieOf(response)).toBeUndefined();
  });

  it('the console: a single sign-on button, the menu of the role, and signing out', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    page.setDefaultTimeout(20_000);
    await page.goto(`${stack.url}/ui/`);
    await page.locator('#sso a').waitFor();
    await page.locator('#sso a').click();
    for (let step = 0; step < 4 && !new URL(page.url()).pathname.startsWith('/ui/'); step++) {
      if (await page.locator('input[name="login"]').count()) {
        await page.locator('input[name="login"]').fill('bea');
        await page.locator('input[name="password"]').fill('any password');
      }
      await Promise.all([page.waitForNavigation(), page.locator('button[type="submit"]').first().click()]);
    }
    // Bea is a member: her own sessions and chat, no runs or skills in the menu.
    await page.locator('#nav a').first().waitFor();
    const menu = await page.locator('#nav a').allTextContents();
    expect(menu).toEqual(expect.arrayContaining(['Sessions', 'Chat', 'Usage']));
    expect(menu).not.toContain('Runs');
    expect(menu).not.toContain('Skills');
    await page.locator('#sign-out').click();
    await page.getByText('Signed out.').waitFor();
    expect(await page.evaluate(async () => (await fetch('/v1/auth/session')).status)).toBe(401);
    await context.close();
  });

  it('the console takes a personal token as a sign-in of that person', async () => {
    const context = await browser.newContext();
    const page = await context.newPage();
    page.setDefaultTimeout(20_000);
    await page.goto(`${stack.url}/ui/`);
    await page.locator('#token').fill(ana.token);
    await page.keyboard.press('Enter');
    await page.locator('#nav a').first().waitFor();
    expect((await context.cookies()).find((cookie) => cookie.name === 'herald_session')).toBeDefined();
    // The token itself is not kept by the page: the cookie holds the session.
    expect(await page.evaluate(() => (globalThis as unknown as { sessionStorage: { getItem(key: string): string | null } }).sessionStorage.getItem('herald.token'))).toBeNull();
    await context.close();
  });

  it('tells the console which ways of signing in there are', async () => {
    expect(await (await fetch(`${stack.url}/v1/auth/methods`)).json()).toEqual({ token: true, oidc: true });
  });
});
