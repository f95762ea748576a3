import { readdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { startFakeOpenAI } from './support/fake-llm.ts';
import type { FakeLLM } from './support/fake-llm.ts';
import { buildConsole, launchChromium } from './support/browser.ts';
import { startStack, TEST_TOKEN, waitFor } from './support/stack.ts';
import type { Stack } from './support/stack.ts';

/** Issue 32, point 6: the console's usage page, a per-day cost chart stacked by profile, in headless Chromium. */
describe('the console usage page', () => {
  let llm: FakeLLM;
  let stack: Stack;
  let browser: Browser;
  let page: Page;
  const consoleErrors: string[] = [];

  beforeAll(async () => {
    await buildConsole();
    llm = await startFakeOpenAI();
    stack = await startStack({ model: llm });
    expect((await stack.post('/v1/profiles', { name: 'ops' })).status).toBe(201);
    for (const [profile, user] of [
      ['main', 'ana'],
      ['ops', 'bob'],
      ['ops', 'ana'],
    ] as const) {
      const sent = await stack.post('/v1/messages?wait=30', { chat_id: `${profile}-${user}`, user_id: user, text: 'hello', profile });
      expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    }
    // Price the calls as if the model had one, and move one of them three days back.
    await sql`UPDATE model_calls SET cost_usd = 0.25, price_known = true`.execute(stack.database.db);
    await sql`UPDATE model_calls SET created_at = now() - interval '3 days' WHERE id = (SELECT min(id) FROM model_calls)`.execute(stack.database.db);
    expect((await stack.put('/v1/budgets/profile/ops', { per_month: 20 })).status).toBe(200);
    browser = await launchChromium();
    page = await (await browser.newContext({ viewport: { width: 1280, height: 900 } })).newPage();
    page.setDefaultTimeout(20_000);
    page.on('console', (message) => {
      if (message.type() === 'error') consoleErrors.push(message.text());
    });
  }, 240_000);
  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
  });

  it('draws the cost per day stacked by profile, the people and models, and the budgets, under the CSP', async () => {
    await page.goto(`${stack.url}/ui/#/usage`);
    await page.locator('#token').fill(TEST_TOKEN);
    await page.keyboard.press('Enter');
    await page.locator('h1', { hasText: 'Usage' }).waitFor();
    const bars = await page.locator('svg.chart rect').evaluateAll((rects) => rects.map((rect) => `${rect.getAttribute('data-day')} ${rect.getAttribute('data-profile')}`));
    const today = new Date().toISOString().slice(0, 10);
    const earlier = new Date(Date.now() - 3 * 86_400_000).toISOString().slice(0, 10);
    expect(bars.sort()).toEqual([`${earlier} main`, `${today} ops`].sort());
    // Two calls of ops today: one bar twice the height of main's single call.
    const heights = await page.locator('svg.chart rect').evaluateAll((rects) => Object.fromEntries(rects.map((rect) => [rect.getAttribute('data-profile'), Number(rect.getAttribute('height'))])));
    expect(heights['ops']).toBeCloseTo(2 * heights['main']!, 1);
    expect(await page.locator('svg.chart rect[data-profile="ops"] title').textContent()).toBe(`${today} · ops: $0.50, 2 calls`);
    if (process.env.HERALD_USAGE_SHOT) await page.screenshot({ path: process.env.HERALD_USAGE_SHOT, fullPage: true });
    expect(await page.locator('.legend li').allTextContents()).toEqual(['main', 'ops']);
    expect(await page.locator('section', { hasText: 'By person' }).locator('tbody th').allTextContents()).toEqual(['api:ana', 'api:bob']);
    expect(await page.locator('section', { hasText: 'By model' }).locator('tbody th').allTextContents()).toEqual(['openai/gpt-test']);
    expect(await page.locator('section', { hasText: 'By kind of call' }).locator('tbody th').allTextContents()).toEqual(['turn']);
    expect(await page.locator('section', { hasText: 'Budgets' }).locator('tbody tr').allTextContents()).toEqual(['profile opsoff$20.00']);
    // A range without the earlier day drops its bar.
    await page.locator('input[name="from"]').fill(today);
    await page.keyboard.press('Enter');
    await waitFor(async () => ((await page.locator('svg.chart rect').count()) === 1 ? true : undefined), { what: 'one bar left' });
    expect(consoleErrors.filter((text) => /Content Security Policy|Refused/.test(text))).toEqual([]);
  });

  it("keeps the first page's script under 200 KB", () => {
    const assets = fileURLToPath(new URL('../services/ingress/console/dist/assets/', import.meta.url));
    const dist = readdirSync(assets).filter((name) => name.endsWith('.js'));
    expect(dist.length).toBeGreaterThan(0);
    for (const name of dist) expect(readFileSync(`${assets}${name}`).length, name).toBeLessThan(200 * 1024);
  });
});
