import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { buildConsole, launchChromium } from './support/browser.ts';
import { startStack } from './support/stack.ts';
import type { Stack } from './support/stack.ts';

const SHOTS = fileURLToPath(new URL('../test-results/console/', import.meta.url));

/** The console as a newcomer meets it: an open API on loopback, or one that needs its token. */
describe('the console for a newcomer', () => {
  let open: Stack;
  let guarded: Stack;
  let browser: Browser;
  let page: Page;

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    await buildConsole();
    // No HERALD_API_TOKEN: the default setup of the README's first run.
    open = await startStack({ env: { HERALD_API_TOKEN: '' } });
    guarded = await startStack();
    browser = await launchChromium();
    page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
    page.setDefaultTimeout(20_000);
  }, 240_000);
  afterAll(async () => {
    await browser?.close();
    await open?.stop();
    await guarded?.stop();
  });

  it('with no API token configured, opens without a sign-in and says why', async () => {
    expect(open.config.api.token).toBeUndefined();
    await page.goto(`${open.url}/ui/`);
    await page.locator('#open-api').waitFor();
    expect(await page.locator('#open-api').textContent()).toContain('HERALD_API_TOKEN is not set');
    await expect.poll(() => page.locator('#nav').isVisible()).toBe(true);
    await expect.poll(() => page.locator('h1').first().textContent()).not.toBe('Sign in');
    expect(await page.locator('#token').count()).toBe(0);
    expect(await page.locator('#sign-out').isHidden()).toBe(true);
    await page.screenshot({ path: `${SHOTS}open-api.png`, fullPage: true });
  });

  it('with a token, says where the token comes from and refuses a wrong one', async () => {
    await page.goto(`${guarded.url}/ui/`);
    await expect.poll(() => page.locator('h1').textContent()).toBe('Sign in');
    expect(await page.locator('#open-api').count()).toBe(0);
    await page.getByText('from the .env that `herald init` wrote').waitFor();
    await page.locator('#token').fill('anything-at-all-1');
    await page.keyboard.press('Enter');
    await page.getByText('That token was refused: compare it with HERALD_API_TOKEN').waitFor();
    await expect.poll(() => page.locator('#nav').isHidden()).toBe(true);
  });
});
