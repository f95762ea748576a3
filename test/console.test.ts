import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { CHAT_PLATFORMS, PLATFORM_FACTS } from '@herald/core';
import { CONSOLE_CSP } from '@herald/ingress';
import { startFakeOpenAI } from './support/fake-llm.ts';
import type { FakeLLM, FakeRequest } from './support/fake-llm.ts';
import { startFakeTelegram } from './support/fake-telegram.ts';
import type { FakeTelegram } from './support/fake-telegram.ts';
import { buildConsole, launchChromium } from './support/browser.ts';
import { startStack, TEST_TOKEN, waitFor } from './support/stack.ts';
import type { Stack } from './support/stack.ts';

// Written to an ignored folder, so a test run leaves the work tree clean; `npm run docs:console`
// copies them into docs/console/ when the pages changed (docs/console.md).
const SHOTS = fileURLToPath(new URL('../test-results/console/', import.meta.url));
const ALICE = { id: 42, username: 'alice' };
const XSS = '<img src=x onerror=alert(1)>';

/** The fake model: a "remember" message makes it save two memory entries, everything else is echoed. */
function model(request: FakeRequest) {
  const last = request.messages.at(-1);
  if (last?.role === 'tool') return { text: 'Noted: the zeppelin report goes out on Mondays, and Alice owns it.' };
  if (request.lastUserText.startsWith('Please remember')) {
    return {
      toolCalls: [
        { name: 'memory', arguments: { action: 'add', target: 'user', content: 'Alice owns the Monday zeppelin report' } },
        { name: 'memory', arguments: { action: 'add', target: 'memory', content: 'Reports go out on Mondays at 09:00' } },
      ],
    };
  }
  return { text: `echo: ${request.lastUserText}` };
}

describe('the web console, in headless Chromium against a running Herald', () => {
  let llm: FakeLLM;
  let telegram: FakeTelegram;
  let stack: Stack;
  let browser: Browser;
  let context: BrowserContext;
  let page: Page;
  let sessionId: string;
  let jobId: string;
  const dialogs: string[] = [];
  const requests: string[] = [];
  const consoleErrors: string[] = [];
  const cspMissing: string[] = [];

  const say = async (text: string) => {
    const response = await stack.post('/v1/messages?wait=30', { chat_id: 'ops-room', user_id: 'alice', text });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    return response.body as { session_id: string };
  };
  const shot = (name: string) => page.screenshot({ path: `${SHOTS}${name}.png`, fullPage: true });
  const open = async (hash: string) => {
    await page.goto(`${stack.url}/ui/${hash}`);
  };
  const signIn = async (token: string) => {
    await page.locator('#token').fill(token);
    await page.keyboard.press('Enter');
  };

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    await buildConsole();
    llm = await startFakeOpenAI({ handler: model });
    telegram = await startFakeTelegram();
    stack = await startStack({
      model: llm,
      scheduler: true,
      env: {
        ...telegram.env,
        TELEGRAM_MODE: 'webhook',
        TELEGRAM_WEBHOOK_SECRET: 'console-secret',
        TELEGRAM_WEBHOOK_URL: 'https://herald.example.com/telegram/webhook',
        TELEGRAM_ALLOWED_USERS: String(ALICE.id),
        HERALD_DELIVERY_POLL_MS: '100',
        HERALD_STREAMING_TELEGRAM: 'off',
      },
    });
    // The agent's notes are the writer's own unless the operator shares them profile-wide; this
    // profile shares them, so the Memory page shows one profile store and one person's profile.
    expect((await stack.patch('/v1/profiles/main', { memory_shared: true })).status).toBe(200);
    ({ session_id: sessionId } = await say('Please remember: the zeppelin report goes out on Mondays'));
    await say(XSS);
    for (const text of ['What is on the agenda today?', 'Summarise the incident from last night', 'Thanks, that is all']) await say(text);

    // A Telegram reply the platform refuses for good: the outbox's dead letter (replies go out whole
    // here, HERALD_STREAMING_TELEGRAM=off, so the refused call is the outbox's own).
    telegram.failNext('sendMessage', { kind: 'status', code: 403, description: 'Forbidden: bot was blocked by the user' });
    await stack.post('/telegram/webhook', telegram.userMessage({ chatId: 4444, from: ALICE, text: 'status please' }), { 'x-telegram-bot-api-secret-token': 'console-secret' });
    await waitFor(async () => (await stack.get('/v1/admin/dead-letters')).body.deliveries?.[0], { what: 'a failed delivery' });

    const job = await stack.post('/v1/cron/jobs', { user_id: 'alice', name: 'Monday report', prompt: 'Write the Monday zeppelin report', schedule: '0 9 * * 1', timezone: 'America/New_York' });
    expect(job.status, JSON.stringify(job.body)).toBe(201);
    jobId = job.body.job_id;
    expect((await stack.post(`/v1/cron/jobs/${jobId}/run`, {})).status).toBe(202);
    await waitFor(async () => ((await stack.get(`/v1/cron/jobs/${jobId}/runs`)).body.runs?.[0]?.status === 'succeeded' ? true : undefined), { what: 'the manual run', timeoutMs: 30_000 });

    const skill =
      '---\nname: weekly-report\ndescription: How to write the Monday zeppelin report.\ncategory: reports\n---\n# Weekly report\n\n1. Gather the numbers from the dashboard.\n2. Write three lines: done, next, blocked.\n3. Post it in #ops before 09:00.\n';
    expect((await stack.post('/v1/profiles/main/skills/_import', { skills: [{ files: { 'SKILL.md': skill } }] })).status).toBeLessThan(300);

    browser = await launchChromium();
    context = await browser.newContext({ viewport: { width: 1280, height: 800 }, colorScheme: 'light' });
    page = await context.newPage();
    page.setDefaultTimeout(20_000);
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    page.on('request', (request) => requests.push(request.url()));
    page.on('console', (message) => {
      if (message.type() === 'error') consoleErrors.push(message.text());
    });
    page.on('response', (response) => {
      if (new URL(response.url()).pathname.startsWith('/ui') && response.headers()['content-security-policy'] !== CONSOLE_CSP) cspMissing.push(response.url());
    });
  }, 240_000);

  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
    await telegram?.close();
    await llm?.close();
  });

  it('refuses a wrong token with a clear message and keeps it out of the URL and storage', async () => {
    await open('');
    await expect.poll(() => page.locator('h1').textContent()).toBe('Sign in');
    await shot('sign-in');
    await signIn('not-the-token-000');
    await page.getByText('That token was refused').waitFor();
    expect(page.url()).not.toContain('not-the-token');
    expect(await page.evaluate<string | null>("sessionStorage.getItem('herald.token')")).toBeNull();
    await expect.poll(() => page.locator('#nav').isHidden()).toBe(true);
  });

  it("signs in, finds the chat's session by its filters and reads the transcript, tool calls folded", async () => {
    await signIn(TEST_TOKEN);
    await page.locator('a[aria-current="page"]', { hasText: 'Sessions' }).waitFor();
    expect(page.url()).not.toContain(TEST_TOKEN);
    expect(await page.evaluate<string | null>("sessionStorage.getItem('herald.token')")).toBe(TEST_TOKEN);
    await page.locator(`[data-session="${sessionId}"]`).waitFor();
    await shot('sessions');

    await page.getByLabel('Chat').fill('ops-room');
    // The platform choices are the server's (GET /v1/sessions names the registry's), not the console's own list.
    expect(await page.getByLabel('Platform').locator('option').allTextContents()).toEqual(['any', 'API', ...CHAT_PLATFORMS.map((platform) => PLATFORM_FACTS[platform].label), 'Cron']);
    await page.getByLabel('Platform').selectOption({ label: 'API' });
    await page.getByLabel('State').selectOption('live');
    await page.getByRole('button', { name: 'Filter' }).click();
    await expect.poll(() => page.locator('ul.rows > li').count()).toBe(1);
    await page.locator(`[data-session="${sessionId}"] a`).click();

    await page.getByRole('heading', { name: 'Transcript' }).waitFor();
    const transcript = page.locator('ol.transcript');
    await transcript.getByText('Please remember: the zeppelin report goes out on Mondays').waitFor();
    await transcript.getByText('Noted: the zeppelin report goes out on Mondays, and Alice owns it.').waitFor();
    const call = transcript.locator('details.tool-call').first();
    expect(await call.locator('summary').textContent()).toBe('calls memory');
    expect(await call.getAttribute('open')).toBeNull();
    expect(await transcript.locator('details.tool-result').count()).toBe(2);
    await call.locator('summary').click();
    expect(await call.locator('pre').textContent()).toContain('Alice owns the Monday zeppelin report');
    await page.getByText(/^Stored system prompt · \d+ characters/).waitFor();
    await page.getByText('Nothing waits for a person.').waitFor();
    await shot('session');
  });

  it('shows a message carrying HTML as those characters, and runs nothing', async () => {
    const message = page.locator('ol.transcript .msg.user .text', { hasText: XSS });
    await message.waitFor();
    expect(await message.textContent()).toBe(XSS);
    expect(await page.locator('main img').count()).toBe(0);
    expect(dialogs).toEqual([]);
  });

  it('searches a word and lands on its message, highlighted', async () => {
    await page.getByRole('link', { name: 'Search' }).click();
    await page.getByLabel('Search', { exact: true }).fill('zeppelin');
    await page.getByLabel('Person').fill('alice');
    await page.getByRole('button', { name: 'Search' }).click();
    // The chat's hits (the cron run's prompt names the word too, in a session of its own).
    const hit = page.locator(`a.hit-link[href^="#/session/${sessionId}?"]`).first();
    await hit.waitFor();
    expect((await hit.locator('mark').first().textContent())?.toLowerCase()).toBe('zeppelin');
    await shot('search');
    const messageId = await hit.getAttribute('data-hit');
    await hit.click();
    const landed = page.locator(`#m-${messageId}`);
    await landed.waitFor();
    expect(page.url()).toContain(`#/session/${sessionId}?at=${messageId}`);
    expect(await landed.getAttribute('class')).toContain('hit');
    expect((await landed.textContent())?.toLowerCase()).toContain('zeppelin');
    await expect.poll(() => landed.isVisible()).toBe(true);
    expect(await page.evaluate<string | undefined>('document.activeElement?.id')).toBe(`m-${messageId}`);
  });

  it("pauses and resumes a cron job, next fire shown in the browser's zone and the job's", async () => {
    await page.getByRole('link', { name: 'Cron' }).click();
    const card = page.locator(`[data-job="${jobId}"]`);
    await card.getByText('in America/New_York').waitFor();
    await card.locator('.runs .badge', { hasText: 'succeeded' }).waitFor();
    await shot('cron');
    await card.getByRole('button', { name: 'Pause' }).click();
    const confirm = page.locator('dialog#confirm');
    await confirm.getByText('Pause Monday report?').waitFor();
    await confirm.getByRole('button', { name: 'Confirm' }).click();
    await card.getByRole('button', { name: 'Resume' }).waitFor();
    expect((await stack.get(`/v1/cron/jobs/${jobId}`)).body).toMatchObject({ enabled: false, state: 'paused' });
    await card.getByRole('button', { name: 'Resume' }).click();
    await card.getByRole('button', { name: 'Pause' }).waitFor();
    expect((await stack.get(`/v1/cron/jobs/${jobId}`)).body).toMatchObject({ enabled: true, state: 'scheduled' });
  });

  it('shows a skill with its SKILL.md and versions, and pins it', async () => {
    await page.getByRole('link', { name: 'Skills' }).click();
    await page.getByRole('link', { name: /weekly-report/ }).click();
    await page.getByText('Post it in #ops before 09:00.', { exact: false }).waitFor();
    await page.getByRole('button', { name: 'Pin', exact: true }).click();
    await page.getByRole('button', { name: 'Unpin' }).waitFor();
    expect((await stack.get('/v1/profiles/main/skills')).body.skills[0]).toMatchObject({ name: 'weekly-report', pinned: true });
    await shot('skills');
  });

  it('deletes a memory entry by keyboard, after a confirmation that names the frozen snapshot', async () => {
    await page.getByRole('link', { name: 'Memory' }).click();
    await page.getByLabel('Person').fill('alice');
    await page.keyboard.press('Enter');
    const entry = page.locator('.entry', { hasText: 'Alice owns the Monday zeppelin report' });
    await entry.waitFor();
    await page.locator('.entry', { hasText: 'Reports go out on Mondays at 09:00' }).waitFor();
    await shot('memory');
    await entry.getByRole('button', { name: 'Delete' }).focus();
    await page.keyboard.press('Enter');
    const confirm = page.locator('dialog#confirm');
    await confirm.getByText('the change shows from the next session').waitFor();
    // The dialog opens on Cancel; Tab moves to Confirm.
    expect(await page.evaluate<string | undefined>('document.activeElement?.id')).toBe('confirm-cancel');
    await page.keyboard.press('Tab');
    await page.keyboard.press('Enter');
    await entry.waitFor({ state: 'detached' });
    const memory = (await stack.get('/v1/profiles/main/users/alice/memory')).body;
    expect(memory.entries).toEqual([]);
    expect((await stack.get('/v1/profiles/main/memory')).body.entries.map((e: any) => e.content)).toEqual(['Reports go out on Mondays at 09:00']);
  });

  it("shows a person's own agent notes beside the profile-wide ones when notes are not shared, and deletes one", async () => {
    expect((await stack.patch('/v1/profiles/main', { memory_shared: false })).status).toBe(200);
    const said = await stack.post('/v1/messages?wait=30', { chat_id: 'bob-dm', user_id: 'bob', text: 'Please remember: the zeppelin report goes out on Mondays' });
    expect(said.status, JSON.stringify(said.body)).toBe(200);
    await open('#/memory?profile=main&user_id=bob');
    await page.locator('[data-memory-scope="personal"]').waitFor();
    const own = page.getByRole('region', { name: 'Agent notes from bob’s sessions' });
    const entry = own.locator('.entry', { hasText: 'Reports go out on Mondays at 09:00' });
    await entry.waitFor();
    // The profile-wide note written while notes were shared is listed on its own, once.
    const profileWide = page.getByRole('region', { name: 'Profile-wide agent notes (main)' });
    expect(await profileWide.locator('.entry').allTextContents()).toEqual([expect.stringContaining('Reports go out on Mondays at 09:00')]);
    await page.getByRole('region', { name: 'What the agent knows about bob' }).locator('.entry', { hasText: 'Alice owns the Monday zeppelin report' }).waitFor();
    await shot('memory-person');
    await entry.getByRole('button', { name: 'Delete' }).click();
    const confirm = page.locator('dialog#confirm');
    await confirm.getByText('the change shows from the next session').waitFor();
    await confirm.getByRole('button', { name: 'Confirm' }).click();
    await entry.waitFor({ state: 'detached' });
    expect((await stack.get('/v1/profiles/main/memory?user_id=bob')).body.entries).toEqual([]);
    expect((await stack.get('/v1/profiles/main/memory')).body.entries.map((e: any) => e.content)).toEqual(['Reports go out on Mondays at 09:00']);
  });

  it('shows roles, queues and the dead letter with its reason, and retries it until Telegram has the message', async () => {
    await page.getByRole('link', { name: 'Runs' }).click();
    // The stack runs its roles in this process, without heartbeats: each role is listed, none alive.
    await page.getByText('worker: 0 alive').waitFor();
    await page.locator('table th[scope="row"]', { hasText: 'inbox' }).waitFor();
    const letter = page.locator('[data-dead-letter]', { hasText: 'bot was blocked by the user' });
    await letter.waitFor();
    await shot('runs');
    await letter.getByRole('button', { name: 'Retry' }).click();
    await page.getByText('Retry queued.').waitFor();
    const sent = await waitFor(async () => (telegram.botMessages(4444).length > 0 ? telegram.botMessages(4444) : undefined), { what: 'the retried reply' });
    expect(sent.map((message) => message.text)).toEqual(['echo: status please']);
    await letter.waitFor({ state: 'detached' });
  });

  it('shows a session that starts while the page is open, without a reload', async () => {
    await page.getByRole('link', { name: 'Sessions' }).click();
    await page.locator(`[data-session="${sessionId}"]`).waitFor();
    await page.evaluate('window.notReloaded = true');
    const fresh = await stack.post('/v1/messages', { chat_id: 'late-chat', user_id: 'bob', text: 'a new chat starts' });
    await page.locator(`[data-session="${fresh.body.session_id}"]`).waitFor();
    expect(await page.evaluate<boolean | undefined>('window.notReloaded')).toBe(true);
  });

  it("lists a session's subagent runs under its lineage, each linked to its child session", async () => {
    llm.handler = (request) => {
      if (request.messages.at(-1)?.role === 'tool') return { text: 'The check is done.' };
      if (request.lastUserText.includes('Delegate the zeppelin check')) return { toolCalls: [{ name: 'delegate_task', arguments: { goal: 'Check the zeppelin numbers' } }] };
      return { text: 'The zeppelin numbers look right.' };
    };
    try {
      const response = await stack.post('/v1/messages?wait=60', { chat_id: 'delegation-room', user_id: 'alice', text: 'Delegate the zeppelin check' });
      // The parent parks on its child (`?wait` returns at once on a waiting turn), then resumes.
      expect([200, 202], JSON.stringify(response.body)).toContain(response.status);
      const done = await waitFor(
        async () => {
          const event = (await stack.get(`/v1/events/${response.body.event_id}`)).body;
          return event.status === 'done' ? event : undefined;
        },
        { what: 'the parent resumed with its child run' },
      );
      expect(done.reply?.text ?? done.reply_text).toBe('The check is done.');
      const runs = (await stack.get(`/v1/runs?session_id=${response.body.session_id}`)).body.runs;
      expect(runs.map((run: any) => [run.goal, run.status])).toEqual([['Check the zeppelin numbers', 'done']]);
      await open(`#/session/${response.body.session_id}`);
      const row = page.locator(`ul[aria-label="Subagent runs"] [data-run="${runs[0].id}"]`);
      await row.waitFor();
      expect(await row.locator('.badge').textContent()).toBe('done');
      await row.getByRole('link', { name: 'Check the zeppelin numbers' }).click();
      await page.waitForURL(`**/#/session/${runs[0].child_session_id}`);
      await page.getByRole('heading', { name: 'Transcript' }).waitFor();
      await page.locator('ol.transcript').getByText('The zeppelin numbers look right.').waitFor();
    } finally {
      llm.handler = model;
    }
  });

  it('reads at 360 pixels and in the dark scheme', async () => {
    await page.setViewportSize({ width: 360, height: 740 });
    await open(`#/session/${sessionId}`);
    await page.getByRole('heading', { name: 'Transcript' }).waitFor();
    expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(360);
    await shot('session-phone');
    await page.emulateMedia({ colorScheme: 'dark' });
    await open('#/sessions');
    await page.locator(`[data-session="${sessionId}"]`).waitFor();
    expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(360);
    const background = await page.evaluate<string>('getComputedStyle(document.body).backgroundColor');
    expect(background).toBe('rgb(21, 23, 26)');
    await shot('sessions-dark-phone');
  });

  it('loaded nothing from elsewhere, sent the token in no URL, and ran under its CSP without a violation', async () => {
    expect(requests.length).toBeGreaterThan(10);
    for (const url of requests) {
      expect(url.startsWith(`${stack.url}/`), url).toBe(true);
      expect(url).not.toContain(TEST_TOKEN);
    }
    expect(cspMissing).toEqual([]);
    expect(consoleErrors.filter((text) => /Content Security Policy|Refused/.test(text))).toEqual([]);
    expect(dialogs).toEqual([]);
  });
});

describe('the console files', () => {
  let stack: Stack;
  beforeAll(async () => {
    stack = await startStack({ workers: 0 });
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('are served at /ui/ without the token, each response with the strict CSP, nothing outside the build', async () => {
    const redirect = await fetch(`${stack.url}/ui`, { redirect: 'manual' });
    expect(redirect.status).toBe(308);
    expect(redirect.headers.get('location')).toBe('/ui/');
    const index = await fetch(`${stack.url}/ui/`);
    expect(index.status).toBe(200);
    expect(index.headers.get('content-security-policy')).toBe(CONSOLE_CSP);
    expect(index.headers.get('x-content-type-options')).toBe('nosniff');
    const html = await index.text();
    // No inline script or style for the CSP to refuse: every script has a src, no style attribute.
    expect(html).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    expect(html).not.toMatch(/\sstyle=|<style/);
    const script = /src="(\/ui\/assets\/[^"]+\.js)"/.exec(html)?.[1];
    const asset = await fetch(`${stack.url}${script}`);
    expect(asset.status).toBe(200);
    expect(asset.headers.get('content-security-policy')).toBe(CONSOLE_CSP);
    expect((await asset.text()).length).toBeLessThan(200 * 1024);
    for (const path of ['/ui/nope.js', '/ui/..%2f..%2fpackage.json', '/ui/assets/%00.js', '/ui/.env']) {
      const response = await fetch(`${stack.url}${path}`);
      expect(response.status, path).toBeGreaterThanOrEqual(400);
      expect(response.status, path).toBeLessThan(500);
      expect(response.headers.get('content-security-policy'), path).toBe(CONSOLE_CSP);
      expect(await response.text(), path).not.toContain('"name": "herald"');
    }
  });
});
