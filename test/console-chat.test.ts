import { createHash } from 'node:crypto';
import { mkdirSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import sharp from 'sharp';
import { startFakeOpenAI } from './support/fake-llm.ts';
import type { FakeLLM, FakeReply, FakeRequest } from './support/fake-llm.ts';
import { buildConsole, launchChromium } from './support/browser.ts';
import { startStack, TEST_TOKEN, waitFor } from './support/stack.ts';
import type { Stack } from './support/stack.ts';

// Written to an ignored folder; `npm run docs:console` copies them into docs/console/.
const SHOTS = fileURLToPath(new URL('../test-results/console/', import.meta.url));
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
const LONG = 'The dashboard is red because the p99 latency of the checkout service crossed its objective after the deploy at nine, and the rollback is on its way.';
const LIVE = 'Reading the deploy log now: the new build doubled the connection pool, the database refused the extra clients, and checkout retried until its queue filled up.';

/** The fake model: a payment needs the person's approval, a trip asks where to, the rest is answered slowly in pieces. */
function model(request: FakeRequest): FakeReply {
  const last = request.messages.at(-1);
  if (last?.role === 'tool') return { text: `done: ${last.content}`, chunkDelayMs: 20 };
  if (request.lastUserText === 'pay the rent') return { toolCalls: [{ name: 'wire_transfer', arguments: { label: 'rent', amount: 900 } }] };
  if (request.lastUserText === 'plan a trip') return { toolCalls: [{ name: 'clarify', arguments: { question: 'Where to?', choices: ['Paris', 'Rome'] } }] };
  if (request.lastUserText === 'look slowly') return { toolCalls: [{ name: 'slow_lookup', arguments: { label: 'slow', sleep_ms: 60_000 } }] };
  if (request.lastUserText === 'what does the log say?') return { text: LIVE, chunkDelayMs: 120 };
  return { text: LONG, chunkDelayMs: 80 };
}

describe('the console chat, in headless Chromium', () => {
  let llm: FakeLLM;
  let stack: Stack;
  let browser: Browser;
  let page: Page;
  let sessionId: string;
  let chatId: string;

  const turn = () => page.locator('.chat-log .turn').last();
  const finished = () => page.locator('.chat-log .turn').last().and(page.locator('[data-state="done"]')).waitFor();
  const write = async (text: string) => {
    await page.getByLabel('Message').fill(text);
    await page.keyboard.press('Enter');
  };

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    await buildConsole();
    llm = await startFakeOpenAI({ handler: model });
    stack = await startStack({ model: llm, testTools: true });
    expect((await stack.post('/v1/profiles', { name: 'ops' })).status).toBe(201);
    browser = await launchChromium();
    page = await (await browser.newContext({ viewport: { width: 1100, height: 760 }, colorScheme: 'light' })).newPage();
    page.setDefaultTimeout(20_000);
    await page.goto(`${stack.url}/ui/`);
    await page.locator('#token').fill(TEST_TOKEN);
    await page.keyboard.press('Enter');
    await page.getByRole('link', { name: 'Chat' }).click();
  }, 240_000);

  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
    await llm?.close();
  });

  it('picks a profile, shows the answer growing before it is done, and ends with the committed reply', async () => {
    await page.getByLabel('Profile').selectOption('ops');
    await expect.poll(() => page.url()).toContain('profile=ops');
    await write('why is the dashboard red?');
    // Mid-stream: part of the answer is on the page while the turn still runs.
    const partial = await page.waitForFunction(() => {
      // Runs in the page; the test's own types have no DOM.
      const view = (globalThis as any).document.querySelector('.chat-log .turn');
      const text: string = view?.querySelector('.streamed')?.textContent ?? '';
      return view?.dataset.state === 'running' && text.length > 20 ? text : false;
    });
    const shown = (await partial.jsonValue()) as string;
    expect(LONG.startsWith(shown)).toBe(true);
    expect(shown.length).toBeLessThan(LONG.length);
    await page.screenshot({ path: `${SHOTS}chat-streaming.png`, fullPage: true });
    await finished();
    expect(await turn().locator('.streamed').textContent()).toBe(LONG);
    await expect.poll(() => page.url()).toContain('session=');
    sessionId = new URL(page.url()).hash.match(/session=([0-9a-f-]+)/)![1]!;
    chatId = new URL(page.url()).hash.match(/chat=([\w-]+)/)![1]!;
    const session = (await stack.get(`/v1/sessions/${sessionId}`)).body;
    expect(session.profile).toBe('ops');
    const messages = (await stack.get(`/v1/sessions/${sessionId}/messages`)).body.messages;
    expect(messages.at(-1)).toMatchObject({ role: 'assistant', content: LONG });
  });

  it('continues the same conversation with the next message, and after a reload', async () => {
    await write('and what now?');
    await page.locator('.chat-log .turn[data-state="done"]').nth(1).waitFor();
    // The model saw the first exchange: one session, its history sent again.
    expect(llm.requests.at(-1)!.messages.map((message) => message.content)).toEqual(['why is the dashboard red?', LONG, 'and what now?']);
    await page.reload();
    await page.locator('.chat-log .chat-msg.user', { hasText: 'and what now?' }).waitFor();
    expect(await page.locator('.chat-log .chat-msg.assistant .text', { hasText: LONG }).count()).toBe(2);
    expect(new URL(page.url()).hash).toContain(`session=${sessionId}`);
  });

  it('shows the tool call as it runs, and an approval answered by its button lets the turn finish', async () => {
    await page.getByRole('button', { name: 'New conversation' }).click();
    await page.getByLabel('Profile').selectOption('main');
    await write('pay the rent');
    const card = page.getByRole('group', { name: 'Approval' });
    await card.getByText('transfer 900 (rent)').waitFor();
    await page.locator('.chat-log .tool-lines li[data-tool="wire_transfer"][data-status="start"]').waitFor();
    await page.screenshot({ path: `${SHOTS}chat-approval.png`, fullPage: true });
    await card.getByRole('button', { name: 'Approve once' }).click();
    await card.getByText('Answered: Approve once').waitFor();
    await finished();
    expect(await turn().locator('.streamed').textContent()).toBe('done: transferred 900 for rent');
    expect(await page.locator('.chat-log .tool-lines li[data-tool="wire_transfer"]').getAttribute('data-status')).toBe('end');
    const session = new URL(page.url()).hash.match(/session=([0-9a-f-]+)/)![1]!;
    const waits = (await stack.get(`/v1/sessions/${session}/waits`)).body.waits;
    expect(waits).toMatchObject([{ kind: 'approval', status: 'approved', answered_by: 'api:console' }]);
  });

  it('answers a question by one of its choices', async () => {
    await write('plan a trip');
    const card = page.getByRole('group', { name: 'Question' });
    await card.getByText('Where to?').waitFor();
    await card.getByRole('button', { name: 'Rome' }).click();
    await finished();
    expect(await turn().locator('.streamed').textContent()).toBe('done: The person answered: Rome');
  });

  it('shows a message carrying HTML as those characters, and runs nothing', async () => {
    const dialogs: string[] = [];
    page.on('dialog', (dialog) => {
      dialogs.push(dialog.message());
      void dialog.dismiss();
    });
    await write('<img src=x onerror=alert(1)>');
    await finished();
    expect(await page.locator('.chat-log .chat-msg.user .text').last().textContent()).toBe('<img src=x onerror=alert(1)>');
    expect(await page.locator('main img').count()).toBe(0);
    expect(dialogs).toEqual([]);
  });

  it('stops a running turn with its Stop button, and takes the next message', async () => {
    await write('look slowly');
    await page.locator('.chat-log .tool-lines li[data-tool="slow_lookup"][data-status="start"]').waitFor();
    await page.getByRole('button', { name: 'Stop' }).click();
    await page.locator('.chat-log [role="status"]', { hasText: 'Stopping the running turn.' }).waitFor();
    await page.getByRole('button', { name: 'Stop' }).waitFor({ state: 'hidden' });
    expect(await turn().getAttribute('data-state')).not.toBe('running');
    await write('are you there?');
    await finished();
    expect(await turn().locator('.streamed').textContent()).toBe(LONG);
  });

  it("follows a running turn in the session's transcript, then shows the committed messages in its place", async () => {
    await page.goto(`${stack.url}/ui/#/session/${sessionId}`);
    await page.getByRole('heading', { name: 'Transcript' }).waitFor();
    await page.evaluate('window.notReloaded = true');
    // A message to the first conversation from elsewhere (the same chat and profile) while its session is shown.
    const accepted = await stack.post('/v1/messages', { chat_id: chatId, user_id: 'console', text: 'what does the log say?', profile: 'ops' });
    expect(accepted.body.session_id).toBe(sessionId);
    const live = page.locator(`.live-turn [data-live-event="${accepted.body.event_id}"] .streamed`);
    const partial = await page.waitForFunction((selector) => {
      const text: string = (globalThis as any).document.querySelector(selector)?.textContent ?? '';
      return text.length > 10 ? text : false;
    }, `.live-turn [data-live-event="${accepted.body.event_id}"] .streamed`);
    const shown = (await partial.jsonValue()) as string;
    expect(LIVE.startsWith(shown)).toBe(true);
    expect(shown.length).toBeLessThan(LIVE.length);
    // At the end the streamed view goes and the stored reply is in the transcript.
    await live.waitFor({ state: 'detached' });
    await page.locator('ol.transcript .msg.assistant .text', { hasText: LIVE }).waitFor();
    expect(await page.evaluate<boolean | undefined>('window.notReloaded')).toBe(true);
    await waitFor(async () => ((await stack.get(`/v1/events/${accepted.body.event_id}`)).body.status === 'done' ? true : undefined), { what: 'the turn' });
  });

  it("draws a message's picture from a blob: URL, and offers its CSV and its SVG as downloads, never drawn", async () => {
    const png = await sharp({ create: { width: 48, height: 32, channels: 3, background: '#c0392b' } })
      .png()
      .toBuffer();
    const csv = Buffer.from('service,errors\napi,12\nweb,3\n');
    const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="40" height="40"><rect width="40" height="40" fill="red"/></svg>');
    const files = [
      { name: 'dash.png', bytes: png },
      { name: 'errors.csv', bytes: csv },
      { name: 'logo.svg', bytes: svg },
    ];
    const sent = await stack.post('/v1/messages?wait=20', {
      chat_id: 'console-files',
      user_id: 'console',
      text: 'the dashboard and its numbers',
      attachments: files.map((file) => ({ name: file.name, data: file.bytes.toString('base64') })),
    });
    expect(sent.status, JSON.stringify(sent.body)).toBe(200);
    const session = sent.body.session_id as string;
    // The transcript API names each message's files; the console draws from it.
    const messages = (await stack.get(`/v1/sessions/${session}/messages`)).body.messages as { role: string; attachments?: unknown[] }[];
    expect(messages.find((message) => message.role === 'user')?.attachments).toEqual([
      { name: 'dash.png', mime: 'image/png', size: png.length, sha256: sha256(png), kind: 'image' },
      { name: 'errors.csv', mime: 'text/csv', size: csv.length, sha256: sha256(csv), kind: 'document' },
      { name: 'logo.svg', mime: 'image/svg+xml', size: svg.length, sha256: sha256(svg), kind: 'document' },
    ]);
    expect(messages.find((message) => message.role === 'assistant')?.attachments).toBeUndefined();
    // The console's policy lets a page-made blob: be an image, and nothing wider.
    const csp = (await fetch(`${stack.url}/ui/`)).headers.get('content-security-policy') ?? '';
    expect(csp.split('; ').filter((directive) => directive.startsWith('img-src'))).toEqual(["img-src 'self' blob:"]);

    for (const where of [`#/session/${session}`, `#/chat?profile=main&chat=console-files&session=${session}`]) {
      await page.goto(`${stack.url}/ui/${where}`);
      const picture = page.locator(`[data-attachment="${sha256(png)}"] img`);
      await picture.waitFor();
      await expect.poll(() => picture.evaluate((image) => (image as any).naturalWidth as number)).toBe(48);
      expect(await picture.getAttribute('src')).toMatch(/^blob:/);
      expect(await page.locator('main img').count()).toBe(1);
      for (const file of files.slice(1)) {
        expect(await page.locator(`[data-attachment="${sha256(file.bytes)}"] img`).count()).toBe(0);
        const [download] = await Promise.all([page.waitForEvent('download'), page.getByRole('button', { name: `Download ${file.name}` }).click()]);
        expect(download.suggestedFilename()).toBe(file.name);
        expect(readFileSync(await download.path()).equals(file.bytes)).toBe(true);
      }
    }
    await page.screenshot({ path: `${SHOTS}chat-files.png`, fullPage: true });
  });

  it('reads at 360 pixels', async () => {
    await page.setViewportSize({ width: 360, height: 740 });
    await page.goto(`${stack.url}/ui/#/chat?profile=ops&chat=${chatId}&session=${sessionId}`);
    await page.locator('.chat-log .chat-msg.user', { hasText: 'and what now?' }).waitFor();
    expect(await page.evaluate<number>('document.documentElement.scrollWidth')).toBeLessThanOrEqual(360);
  });
});
