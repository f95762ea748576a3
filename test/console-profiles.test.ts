import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { buildConsole, launchChromium } from './support/browser.ts';
import { startStack, TEST_TOKEN } from './support/stack.ts';
import type { Stack } from './support/stack.ts';

// The console's profiles page: every profile with its models and bindings, from GET /v1/profiles.
describe('the console lists profiles with their models and bindings', () => {
  let stack: Stack;
  let browser: Browser;
  let page: Page;
  beforeAll(async () => {
    await buildConsole();
    stack = await startStack();
    expect((await stack.post('/v1/profiles', { name: 'ops' })).status).toBe(201);
    expect((await stack.patch('/v1/profiles/ops', { model: { primary: 'openai/gpt-ops', fallbacks: ['anthropic/claude-x'], context_tokens: 64000 } })).status).toBe(200);
    expect((await stack.post('/v1/profiles', { name: 'research' })).status).toBe(201);
    const bindings = [
      { platform: 'discord', channel_id: '333', profile: 'research' },
      { platform: 'api', chat_id: 'ops-room', profile: 'main' },
      { platform: 'telegram', account: 'research', chat_type: 'group', profile: 'research' },
    ];
    expect((await stack.put('/v1/bindings', { bindings })).status).toBe(200);
    browser = await launchChromium();
    page = await (await browser.newContext()).newPage();
    page.setDefaultTimeout(20_000);
  }, 240_000);
  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
  });

  it('shows each profile, its model chain and the bindings that reach it, or that it has none', async () => {
    await page.goto(`${stack.url}/ui/`);
    await page.locator('#token').fill(TEST_TOKEN);
    await page.keyboard.press('Enter');
    await page.getByRole('link', { name: 'Profiles' }).click();
    const rows = page.getByRole('list', { name: 'Profiles' }).locator('li');
    await expect.poll(() => rows.count()).toBe(3);
    const row = (name: string) => rows.filter({ has: page.locator('.chat', { hasText: new RegExp(`^${name}$`) }) });
    expect(await row('ops').textContent()).toContain('openai/gpt-ops → anthropic/claude-x · context 64000 tokens');
    expect(await row('ops').textContent()).toContain('no bindings');
    expect(await row('research').textContent()).toContain('platform=discord channel_id=333; platform=telegram account=research chat_type=group');
    const main = await row('main').textContent();
    expect(main).toContain("the deployment's models");
    expect(main).toContain('platform=api chat_id=ops-room');
  });
});
