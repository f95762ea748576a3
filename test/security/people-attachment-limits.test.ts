import { createHash, randomBytes } from 'node:crypto';
import { sql } from 'kysely';
import sharp from 'sharp';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { acceptInbound } from '@herald/inbox';
import type { AcceptOptions } from '@herald/inbox';
import { metricsText } from '@herald/telemetry';
import { startFakeOpenAI } from '../support/fake-llm.ts';
import type { FakeLLM } from '../support/fake-llm.ts';
import { startFakeTelegram } from '../support/fake-telegram.ts';
import type { FakeTelegram } from '../support/fake-telegram.ts';
import { metricValue } from '../support/prometheus.ts';
import { openChatsEnv } from '../support/chat-platforms-env.ts';
import { startStack, waitFor } from '../support/stack.ts';
import type { Stack } from '../support/stack.ts';

/**
 * Issue 36, point 5: attachments count toward a person's limits. HERALD_LIMIT_ATTACHMENT_MB_PER_DAY
 * counts the bytes of the files a person's accepted messages carried this UTC day
 * (usage_days.attachment_bytes); a message whose files would pass it is refused like any limit
 * (429 `limit_exceeded`, limit `attachments`, Retry-After; one line in a chat) before a byte of its
 * files is stored, and messages without files still go through. Image tokens count as the
 * provider's input tokens.
 */

const SECRET = 'attachment-limits_1';
const MB = 1024 * 1024;
const OFF = {
  turnsPerMinute: 0,
  globalTurnsPerMinute: 0,
  concurrentTurns: 0,
  globalConcurrentTurns: 0,
  tokensPerDay: 0,
  globalTokensPerDay: 0,
  attachmentBytesPerDay: 0,
  globalAttachmentBytesPerDay: 0,
};
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
/** A CSV of `size` bytes, each file its own bytes (so "nothing stored" is about that file alone). */
const csv = (fill: string, size: number) => Buffer.alloc(size, fill);

describe('the daily attachment allowance', () => {
  let llm: FakeLLM;
  let telegram: FakeTelegram;
  let stack: Stack;

  beforeAll(async () => {
    llm = await startFakeOpenAI({ handler: (request) => ({ text: `echo: ${request.lastUserText.split('\n')[0] ?? ''}` }) });
    telegram = await startFakeTelegram();
    stack = await startStack({
      model: llm,
      env: { ...openChatsEnv(SECRET, telegram), HERALD_LIMIT_ATTACHMENT_MB_PER_DAY: '1', HERALD_MAX_ATTACHMENT_MB: '2', HERALD_MODEL_VISION: 'on' },
    });
  });
  afterAll(async () => {
    await stack.stop();
    await telegram.close();
    await llm.close();
  });

  const db = () => stack.database.db;
  const blobStored = async (bytes: Buffer) => (await db().selectFrom('blobs').select('sha256').where('sha256', '=', sha256(bytes)).executeTakeFirst()) !== undefined;
  const storedFor = async (userId: string) => (await db().selectFrom('inbound_events').select('id').where('user_id', '=', userId).execute()).length;
  const sentToday = async (userId: string) =>
    Number(
      (await sql<{ n: string | null }>`SELECT attachment_bytes AS n FROM usage_days WHERE user_id = ${userId} AND day = (clock_timestamp() AT TIME ZONE 'UTC')::date`.execute(db())).rows[0]?.n ?? 0,
    );
  const audited = async (actor: string) =>
    (await sql<{ subject: string }>`SELECT subject FROM audit_log WHERE kind = 'refusal' AND actor = ${actor} ORDER BY id`.execute(db())).rows.map((row) => row.subject);
  const refusals = async (limit: string) => metricValue((await metricsText()).text, 'herald_quota_refusals_total', { limit }) ?? 0;
  const send = (user: string, text: string, files: { name: string; bytes: Buffer }[]) =>
    fetch(`${stack.url}/v1/messages?wait=20`, {
      method: 'POST',
      headers: { authorization: `Bearer ${stack.env.HERALD_API_TOKEN}`, 'content-type': 'application/json' },
      body: JSON.stringify({ chat_id: `files-${user}`, user_id: user, text, attachments: files.map((file) => ({ name: file.name, data: file.bytes.toString('base64') })) }),
    });

  it("API: files past the day's allowance get 429 `attachments` with Retry-After, nothing stored; files within it and text still go through", async () => {
    const first = csv('a', 700_000);
    expect((await send('ann', 'the first log', [{ name: 'a.csv', bytes: first }])).status).toBe(200);
    expect(await sentToday('api:ann')).toBe(700_000);

    const before = await refusals('attachments');
    const over = csv('b', 400_000);
    const refused = await send('ann', 'one more', [{ name: 'b.csv', bytes: over }]);
    expect(refused.status).toBe(429);
    const retryAfter = Number(refused.headers.get('retry-after'));
    expect(retryAfter).toBeGreaterThanOrEqual(1);
    expect(retryAfter).toBeLessThanOrEqual(86_400);
    const body = (await refused.json()) as { error: { code: string; limit: string; message: string } };
    expect(body.error).toMatchObject({ code: 'limit_exceeded', limit: 'attachments' });
    expect(body.error.message).toMatch(/^Not taken: You have sent as many files today as this Herald allows one person; messages without files still go through/);
    expect(await blobStored(over)).toBe(false);
    expect(await storedFor('api:ann')).toBe(1);
    expect(await sentToday('api:ann')).toBe(700_000);
    expect(await refusals('attachments')).toBe(before + 1);
    expect(await audited('api:ann')).toEqual(['limit:attachments']);

    // 700,000 + 300,000 bytes is within 1 MB (1,048,576): taken. Text alone is never refused by it.
    const fits = csv('c', 300_000);
    expect((await send('ann', 'a small one', [{ name: 'c.csv', bytes: fits }])).status).toBe(200);
    expect(await sentToday('api:ann')).toBe(1_000_000);
    expect((await send('ann', 'just words', [])).status).toBe(200);
    // The allowance is per person: someone else sends the file ann could not.
    expect((await send('bob', 'mine', [{ name: 'b.csv', bytes: over }])).status).toBe(200);
    expect(await blobStored(over)).toBe(true);
  });

  it('counts again in the accepting transaction (two messages racing past the first check), per person and over everyone', async () => {
    const [stored] = await db().selectFrom('event_attachments').selectAll().limit(1).execute();
    const file = { sha256: stored!.sha256, name: stored!.name, path: stored!.path, mime: stored!.mime, kind: stored!.kind, size: 100_000 };
    const message = { profileId: 'main', platform: 'api', chatType: 'dm', chatId: 'files-race', userId: 'api:ann', text: 'late', attachments: [file] };
    const options = (limits: Partial<typeof OFF>): AcceptOptions => ({ backlogLimit: 50, limits: { ...OFF, ...limits } });
    await expect(acceptInbound(db(), message, options({ attachmentBytesPerDay: MB }))).rejects.toMatchObject({ limit: 'attachments' });
    const everyone = Number((await sql<{ n: string }>`SELECT sum(attachment_bytes) AS n FROM usage_days WHERE day = (clock_timestamp() AT TIME ZONE 'UTC')::date`.execute(db())).rows[0]?.n);
    const newcomer = { ...message, userId: 'api:cy', chatId: 'files-cy' };
    await expect(acceptInbound(db(), newcomer, options({ globalAttachmentBytesPerDay: everyone + 99_999 }))).rejects.toMatchObject({ limit: 'global_attachments' });
    expect(await storedFor('api:cy')).toBe(0);
    // Within both, it is taken and its bytes are counted for the day.
    const accepted = await acceptInbound(db(), newcomer, options({ attachmentBytesPerDay: MB, globalAttachmentBytesPerDay: everyone + 100_000 }));
    expect(accepted.duplicate).toBe(false);
    expect(await sentToday('api:cy')).toBe(100_000);
  });

  it('Telegram: a document past the allowance gets a one-line refusal in the chat, its bytes not stored', async () => {
    const person = { id: 8801, username: 'filer' };
    const post = (update: unknown) => stack.post('/telegram/webhook', update, { 'x-telegram-bot-api-secret-token': SECRET });
    const first = csv('d', 700_000);
    await post(telegram.userMessage({ chatId: person.id, from: person, text: 'first', attachment: { kind: 'document', bytes: first, name: 'd.csv', mime: 'text/csv' } }));
    await waitFor(async () => telegram.botMessages(person.id).find((message) => message.text.startsWith('echo:')), { what: 'the answer to the first file' });
    const over = csv('e', 400_000);
    await post(telegram.userMessage({ chatId: person.id, from: person, text: 'second', attachment: { kind: 'document', bytes: over, name: 'e.csv', mime: 'text/csv' } }));
    const refusal = await waitFor(async () => telegram.botMessages(person.id).find((message) => message.text.startsWith('Not taken:'))?.text, { what: 'the refusal' });
    expect(refusal).toMatch(/as many files today as this Herald allows one person/);
    expect(refusal.split('\n')).toHaveLength(1);
    expect(await blobStored(first)).toBe(true);
    expect(await blobStored(over)).toBe(false);
    expect(await storedFor(`telegram:${person.id}`)).toBe(1);
    expect(await audited(`telegram:${person.id}`)).toEqual(['limit:attachments']);
  });

  it("counts an image's tokens as the provider reports them: in the input tokens of the call and the person's day", async () => {
    const width = 96;
    const png = await sharp(randomBytes(width * width * 3), { raw: { width, height: width, channels: 3 } })
      .png()
      .toBuffer();
    expect((await send('viewer', 'what is this?', [{ name: 'noise.png', bytes: png }])).status).toBe(200);
    const parts = llm.requests.flatMap((request) =>
      ((request.body.messages ?? []) as { content: unknown }[]).flatMap((m) => (Array.isArray(m.content) ? (m.content as { type: string; image_url?: { url: string } }[]) : [])),
    );
    const image = parts.find((part) => part.type === 'image_url')?.image_url?.url ?? '';
    expect(image).toMatch(/^data:image\/png;base64,/);
    const usage = await sql<{ day: string; calls: string }>`
      SELECT (SELECT tokens FROM usage_days WHERE user_id = 'api:viewer' AND day = (clock_timestamp() AT TIME ZONE 'UTC')::date) AS day,
             (SELECT sum(c.input_tokens) FROM model_calls c JOIN sessions s ON s.id = c.session_id WHERE s.chat_id = 'files-viewer') AS calls`.execute(db());
    // The fake counts 4 bytes of the request as a token, the image's data URL among them.
    expect(Number(usage.rows[0]?.calls)).toBeGreaterThan(image.length / 4);
    expect(Number(usage.rows[0]?.day)).toBeGreaterThan(image.length / 4);
  });
});
