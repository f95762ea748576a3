import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Browser, Page } from 'playwright-core';
import { startFakeOpenAI } from './support/fake-llm.ts';
import type { FakeLLM } from './support/fake-llm.ts';
import { buildConsole, launchChromium } from './support/browser.ts';
import { startStack, TEST_TOKEN } from './support/stack.ts';
import type { Stack } from './support/stack.ts';

const SHOTS = fileURLToPath(new URL('../test-results/console/', import.meta.url));

/** The wall-clock weekday and time of an instant in a zone, as a person there reads it. */
function wall(iso: string, timeZone: string): string {
  return new Intl.DateTimeFormat('en-US', { timeZone, weekday: 'short', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' }).format(new Date(iso));
}

describe('the routes behind the cron editor, the chat and the person field', () => {
  let llm: FakeLLM;
  let stack: Stack;
  beforeAll(async () => {
    llm = await startFakeOpenAI({ handler: (request) => ({ text: `noted: ${request.lastUserText}` }) });
    stack = await startStack({ model: llm });
  });
  afterAll(async () => {
    await stack?.stop();
    await llm?.close();
  });

  it("previews a cron schedule's next five runs in its zone, with the scheduler's parser", async () => {
    const preview = await stack.get(`/v1/cron/preview?schedule=${encodeURIComponent('30 8 * * 1-5')}&timezone=Asia/Tokyo`);
    expect(preview.status, JSON.stringify(preview.body)).toBe(200);
    expect(preview.body).toMatchObject({ schedule: '30 8 * * 1-5', schedule_kind: 'cron', timezone: 'Asia/Tokyo' });
    expect(preview.body.runs).toHaveLength(5);
    for (const run of preview.body.runs) expect(wall(run, 'Asia/Tokyo')).toMatch(/^(Mon|Tue|Wed|Thu|Fri) 08:30$/);
    const times = preview.body.runs.map((run: string) => Date.parse(run));
    expect([...times].sort((a, b) => a - b)).toEqual(times);
    // The first run is the one a job saved now would get.
    const job = await stack.post('/v1/cron/jobs', { user_id: 'alice', prompt: 'report', schedule: '30 8 * * 1-5', timezone: 'Asia/Tokyo' });
    expect(job.body.next_run_at).toBe(preview.body.runs[0]);

    const every = (await stack.get('/v1/cron/preview?schedule=every%202h&count=3')).body;
    expect(every.timezone).toBe('UTC');
    expect(every.runs.map((run: string) => Date.parse(run) - Date.parse(every.runs[0]))).toEqual([0, 7_200_000, 14_400_000]);
    const once = (await stack.get('/v1/cron/preview?schedule=in%2030m')).body;
    expect(once).toMatchObject({ schedule_kind: 'once' });
    expect(once.runs).toHaveLength(1);
  });

  it('refuses a bad schedule, zone or count with a 400 naming the field, as saving would', async () => {
    const bad = await stack.get('/v1/cron/preview?schedule=every%2010s');
    expect(bad.status).toBe(400);
    expect(bad.body.error).toEqual({ code: 'invalid_request', message: 'schedule: an interval must be at least 1 minute', field: 'schedule' });
    const saved = await stack.post('/v1/cron/jobs', { user_id: 'alice', prompt: 'x', schedule: 'every 10s' });
    expect(saved.body.error).toEqual(bad.body.error);
    const zone = await stack.get('/v1/cron/preview?schedule=0%209%20*%20*%20*&timezone=Mars/Olympus');
    expect(zone.status).toBe(400);
    expect(zone.body.error.field).toBe('timezone');
    expect((await stack.get('/v1/cron/preview')).body.error).toMatchObject({ field: 'schedule', message: 'schedule: is required' });
    expect((await stack.get('/v1/cron/preview?schedule=every%201h&count=500')).body.error.field).toBe('count');
  });

  it('suggests people by id or name, the most recently heard first, and takes % and _ literally', async () => {
    await stack.post('/v1/messages?wait=20', { chat_id: 'c1', user_id: 'alice', user_name: 'Alice Smith', text: 'hello' });
    await stack.post('/v1/messages?wait=20', { chat_id: 'c2', user_id: 'malik', text: 'hi' });
    await stack.post('/v1/messages?wait=20', { chat_id: 'c3', user_id: 'bob', user_name: 'Bob', text: 'hey' });
    const byName = (await stack.get('/v1/people/suggestions?q=smith')).body.people;
    expect(byName).toMatchObject([{ user_id: 'api:alice', name: 'Alice Smith' }]);
    const byId = (await stack.get('/v1/people/suggestions?q=ALI')).body.people.map((person: any) => person.user_id);
    expect(byId).toEqual(['api:malik', 'api:alice']);
    expect((await stack.get('/v1/people/suggestions?q=%25')).body.people).toEqual([]);
    expect((await stack.get('/v1/people/suggestions?q=_')).body.people).toEqual([]);
    expect((await stack.get('/v1/people/suggestions?limit=1')).body.people.map((person: any) => person.user_id)).toEqual(['api:bob']);
    expect((await stack.get('/v1/people/suggestions?limit=0')).status).toBe(400);
  });

  it("lists a session's open events, and refuses an unknown or malformed session", async () => {
    const said = await stack.post('/v1/messages?wait=20', { chat_id: 'c9', user_id: 'carol', text: 'one' });
    expect((await stack.get(`/v1/sessions/${said.body.session_id}/open-events`)).body).toEqual({ events: [] });
    expect((await stack.get('/v1/sessions/00000000-0000-4000-8000-000000000000/open-events')).status).toBe(404);
    expect((await stack.get('/v1/sessions/not-an-id/open-events')).status).toBe(400);
  });
});

describe('the console cron editor and person field, in headless Chromium', () => {
  let llm: FakeLLM;
  let stack: Stack;
  let browser: Browser;
  let page: Page;
  let jobId: string;

  beforeAll(async () => {
    mkdirSync(SHOTS, { recursive: true });
    await buildConsole();
    llm = await startFakeOpenAI({ handler: (request) => ({ text: `noted: ${request.lastUserText}` }) });
    stack = await startStack({ model: llm });
    await stack.post('/v1/messages?wait=20', { chat_id: 'room', user_id: 'alice', user_name: 'Alice Smith', text: 'the zeppelin report is late' });
    browser = await launchChromium();
    page = await (await browser.newContext({ viewport: { width: 1100, height: 900 }, colorScheme: 'light', locale: 'en-US', timezoneId: 'Europe/Berlin' })).newPage();
    page.setDefaultTimeout(20_000);
    await page.goto(`${stack.url}/ui/`);
    await page.locator('#token').fill(TEST_TOKEN);
    await page.keyboard.press('Enter');
    await page.getByRole('link', { name: 'Cron' }).click();
  }, 240_000);

  afterAll(async () => {
    await browser?.close();
    await stack?.stop();
    await llm?.close();
  });

  it('creates a job: the next five runs shown in the chosen zone, saved as GET /v1/cron/jobs lists it', async () => {
    await page.getByRole('link', { name: 'New job' }).click();
    await page.getByRole('heading', { name: 'New cron job' }).waitFor();
    // The zone starts as the browser's.
    expect(await page.getByLabel('Time zone').inputValue()).toBe('Europe/Berlin');
    await page.getByLabel('Name').fill('tokyo-standup');
    await page.getByLabel('Schedule').fill('30 8 * * 1-5');
    await page.getByLabel('Time zone').fill('Asia/Tokyo');
    const runs = page.getByRole('list', { name: 'Next runs' }).locator('li[data-run]');
    const expected = (await stack.get(`/v1/cron/preview?schedule=${encodeURIComponent('30 8 * * 1-5')}&timezone=Asia/Tokyo`)).body.runs;
    await expect.poll(() => runs.evaluateAll((items) => items.map((item) => item.getAttribute('data-run'))), { timeout: 10_000 }).toEqual(expected);
    // Read in Tokyo: 8:30 on weekdays; the Berlin time beside it.
    for (const text of await runs.allTextContents()) expect(text).toMatch(/^(Mon|Tue|Wed|Thu|Fri), .*8:30 AM · .* in Europe\/Berlin$/);
    await page.getByLabel('Deliver to').fill('local');
    await page.getByLabel('Prompt').fill('Post the stand-up notes');
    await page.screenshot({ path: `${SHOTS}cron-editor.png`, fullPage: true });
    await page.getByRole('button', { name: 'Create job' }).click();
    await page.getByText('Saved.').waitFor();
    const jobs = (await stack.get('/v1/cron/jobs')).body.jobs;
    expect(jobs).toMatchObject([
      { name: 'tokyo-standup', schedule: '30 8 * * 1-5', timezone: 'Asia/Tokyo', prompt: 'Post the stand-up notes', user_id: 'api:console', targets: [], next_run_at: expected[0] },
    ]);
    jobId = jobs[0].job_id;
    await page.locator(`[data-job="${jobId}"]`).getByText('zone Asia/Tokyo').waitFor();
  });

  it("shows the API's error next to the field for a bad schedule, and saves nothing", async () => {
    await page.locator(`[data-job="${jobId}"]`).getByRole('link', { name: 'Edit' }).click();
    await page.getByRole('heading', { name: 'Edit tokyo-standup' }).waitFor();
    expect(await page.getByLabel('Schedule').inputValue()).toBe('30 8 * * 1-5');
    await page.getByLabel('Schedule').fill('every 10s');
    const refused = await stack.patch(`/v1/cron/jobs/${jobId}`, { schedule: 'every 10s' });
    expect(refused.status).toBe(400);
    const error = page.locator('#cron-schedule-error');
    // While typing, from the preview; on saving, from the save itself.
    await expect.poll(() => error.textContent(), { timeout: 10_000 }).toBe(refused.body.error.message);
    await page.getByRole('button', { name: 'Save changes' }).click();
    await expect.poll(() => error.textContent()).toBe(refused.body.error.message);
    expect(await error.isVisible()).toBe(true);
    expect(await page.getByLabel('Schedule').getAttribute('aria-invalid')).toBe('true');
    expect(await page.getByLabel('Schedule').getAttribute('aria-describedby')).toContain('cron-schedule-error');
    await page.getByLabel('Deliver to').fill('carrier-pigeon:7');
    await page.getByLabel('Schedule').fill('every 2h');
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.locator('#cron-deliver-error', { hasText: "unknown delivery target 'carrier-pigeon:7'" }).waitFor();
    expect((await stack.get(`/v1/cron/jobs/${jobId}`)).body).toMatchObject({ schedule: '30 8 * * 1-5', targets: [] });
  });

  it('edits a job: the new schedule and prompt are saved', async () => {
    await page.getByLabel('Deliver to').fill('local');
    await page.getByLabel('Schedule').fill('0 18 * * 5');
    await page.getByLabel('Prompt').fill('Post the weekly summary');
    await page.getByRole('list', { name: 'Next runs' }).locator('li[data-run]').nth(4).waitFor();
    await page.getByRole('button', { name: 'Save changes' }).click();
    await page.getByText('Saved.').waitFor();
    const job = (await stack.get(`/v1/cron/jobs/${jobId}`)).body;
    expect(job).toMatchObject({ schedule: '0 18 * * 5', timezone: 'Asia/Tokyo', prompt: 'Post the weekly summary' });
    expect(wall(job.next_run_at, 'Asia/Tokyo')).toBe('Fri 18:00');
  });

  it('searches a person given by name, with suggestions from the people Herald knows', async () => {
    await page.getByRole('link', { name: 'Search' }).click();
    await page.getByLabel('Search', { exact: true }).fill('zeppelin');
    await page.getByLabel('Person').fill('Ali');
    const option = page.locator('datalist#people-suggestions option[value="api:alice"]');
    await option.waitFor({ state: 'attached' });
    expect(await option.getAttribute('label')).toBe('Alice Smith');
    await page.getByLabel('Person').fill('alice smith');
    await page.getByRole('button', { name: 'Search' }).click();
    await page.locator('a.hit-link mark', { hasText: 'zeppelin' }).first().waitFor();
    expect(new URL(page.url()).hash).toContain('user_id=api%3Aalice');
  });
});
