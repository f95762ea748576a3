import { createHash } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { BLOB_GRACE_MS, pruneBlobs, putBlob } from '@herald/attachments';
import { startFakeOpenAI } from './support/fake-llm.ts';
import type { FakeLLM, FakeReply, FakeRequest } from './support/fake-llm.ts';
import { startFakeDiscord } from './support/fake-discord.ts';
import type { FakeDiscord } from './support/fake-discord.ts';
import { startFakeTelegram } from './support/fake-telegram.ts';
import type { FakeTelegram } from './support/fake-telegram.ts';
import { startStack, waitFor } from './support/stack.ts';
import type { Stack } from './support/stack.ts';

// Issue 36: files in (Telegram photos, documents, voice notes; the API), to the model, and out.

const SECRET = 'webhook-secret_1';
const ALICE = { id: 42, username: 'alice' };
export const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNk+M9QDwADhgGAWjR9awAAAABJRU5ErkJggg==', 'base64');
/** The start of an Ogg Opus stream, as a phone's voice note begins: enough for the type to be sniffed. */
export const OGG_OPUS = Buffer.concat([Buffer.from('OggS'), Buffer.alloc(24), Buffer.from('OpusHead'), Buffer.alloc(40, 1)]);
export const CSV = Buffer.from('service,errors\napi,12\nweb,3\n');

export const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

/** The user messages' image parts the fake model received (OpenAI's image_url data URLs). */
export function imageUrls(request: FakeRequest): string[] {
  const messages = (request.body.messages ?? []) as { role: string; content: unknown }[];
  return messages.flatMap((message) =>
    message.role === 'user' && Array.isArray(message.content)
      ? (message.content as { type: string; image_url?: { url: string } }[]).filter((part) => part.type === 'image_url').map((part) => part.image_url?.url ?? '')
      : [],
  );
}

/** Calls the tools `calls` names on the first request, then reports the tool results as text. */
export function toolThenReport(calls: (text: string) => { name: string; arguments: Record<string, unknown> }[]) {
  return (request: FakeRequest): FakeReply => {
    const last = request.messages[request.messages.length - 1];
    if (last?.role === 'tool') return { text: `results: ${last.content}` };
    const toolCalls = calls(request.lastUserText);
    return toolCalls.length > 0 ? { toolCalls } : { text: `plain: ${request.lastUserText}` };
  };
}

describe('attachments through Telegram (issue 36)', () => {
  let llm: FakeLLM;
  let telegram: FakeTelegram;
  let stack: Stack;
  beforeAll(async () => {
    llm = await startFakeOpenAI();
    telegram = await startFakeTelegram();
    stack = await startStack({
      model: llm,
      env: {
        ...telegram.env,
        HERALD_DELIVERY_POLL_MS: '100',
        TELEGRAM_MODE: 'webhook',
        TELEGRAM_WEBHOOK_SECRET: SECRET,
        TELEGRAM_ALLOWED_USERS: String(ALICE.id),
        HERALD_MODEL_VISION: 'on',
        HERALD_TRANSCRIBE_MODEL: 'openai/whisper-1',
        HERALD_MAX_ATTACHMENT_MB: '1',
      },
    });
  });
  afterAll(async () => {
    await stack.stop();
    await telegram.close();
    await llm.close();
  });

  const post = (update: unknown) => stack.post('/telegram/webhook', update, { 'x-telegram-bot-api-secret-token': SECRET });
  const botTexts = (chatId: number) => telegram.botMessages(chatId).map((message) => message.text);
  const waitForText = (chatId: number, pattern: RegExp) => waitFor(async () => botTexts(chatId).find((text) => pattern.test(text)), { what: `a bot message matching ${pattern}` });
  const blobCount = async () =>
    Number(
      (
        await stack.database.db
          .selectFrom('blobs')
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );

  it('gives a photo to the model as image content, and a redelivered update stores and downloads nothing twice', async () => {
    llm.handler = (request) => ({ text: `saw ${imageUrls(request).length} image(s)` });
    const update = telegram.userMessage({ chatId: 42, from: ALICE, text: 'why is this red?', attachment: { kind: 'photo', bytes: PNG } });
    expect((await post(update)).body.outcome).toBe('accepted');
    const blobs = await blobCount();
    expect((await post(update)).body.outcome).toBe('duplicate');
    expect(await blobCount()).toBe(blobs);
    expect([...telegram.downloads.values()]).toEqual([1]);
    expect(await waitForText(42, /^saw/)).toBe('saw 1 image(s)');
    const request = llm.requests[llm.requests.length - 1]!;
    expect(imageUrls(request)).toEqual([`data:image/png;base64,${PNG.toString('base64')}`]);
    expect(request.lastUserText).toContain('why is this red?');
    expect(request.lastUserText).toContain(`attachments/${sha256(PNG).slice(0, 8)}-photo-`);
    const rows = await stack.database.db.selectFrom('event_attachments').selectAll().execute();
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ sha256: sha256(PNG), mime: 'image/png', kind: 'image' });
  });

  it('writes a document into the workspace under attachments/, where read_file reads it', async () => {
    const path = `attachments/${sha256(CSV).slice(0, 8)}-errors.csv`;
    llm.handler = toolThenReport(() => [{ name: 'read_file', arguments: { path } }]);
    const update = telegram.userMessage({ chatId: 43, from: ALICE, text: '', attachment: { kind: 'document', bytes: CSV, name: 'errors.csv', mime: 'text/csv' } });
    await post(update);
    const reply = await waitForText(43, /^results:/);
    expect(reply).toContain('api,12');
    const request = llm.requests.find((r) => r.lastUserText.includes(path));
    expect(request?.lastUserText).toContain(`[file attached: ${path}, text/csv`);
  });

  it('transcribes a voice note: the transcript is the message, and the person is told', async () => {
    llm.handler = (request) => ({ text: `heard: ${request.lastUserText.split('\n').pop()}` });
    const update = telegram.userMessage({ chatId: 44, from: ALICE, text: '', attachment: { kind: 'voice', bytes: OGG_OPUS } });
    await post(update);
    expect(await waitForText(44, /^heard:/)).toBe(`heard: ${llm.transcript}`);
    expect(await waitForText(44, /^Transcribed/)).toContain(llm.transcript);
    expect(llm.transcriptions.at(-1)).toMatchObject({ model: 'whisper-1' });
    expect(llm.transcriptions.at(-1)?.bytes.equals(OGG_OPUS)).toBe(true);
    // History search finds what was said, and the names of documents.
    const found = await stack.get(`/v1/search?q=${encodeURIComponent('restart the api pods')}&user_id=${encodeURIComponent('telegram:42')}`);
    expect(JSON.stringify(found.body)).toContain('restart the api pods');
  });

  it('refuses an oversized file (its stated size a lie too) and a file whose extension lies, saying so', async () => {
    const big = Buffer.alloc(1_500_000, 'a');
    const before = await blobCount();
    await post(telegram.userMessage({ chatId: 45, from: ALICE, text: 'the full log', attachment: { kind: 'document', bytes: big, name: 'full.log', size: 1000 } }));
    expect(await waitForText(45, /^I could not take full\.log/)).toMatch(/larger than the 1 MB/);
    await post(telegram.userMessage({ chatId: 46, from: ALICE, text: 'the invoice', attachment: { kind: 'document', bytes: PNG, name: 'invoice.pdf' } }));
    expect(await waitForText(46, /^I could not take invoice\.pdf/)).toMatch(/not what its name says: its bytes are a png file/);
    expect(await blobCount()).toBe(before);
  });
});

describe('attachments through POST /v1/messages (issue 36)', () => {
  let llm: FakeLLM;
  let stack: Stack;
  beforeAll(async () => {
    llm = await startFakeOpenAI();
    stack = await startStack({ model: llm, env: { HERALD_MODEL_VISION: 'on', HERALD_MAX_ATTACHMENT_MB: '1' } });
  });
  afterAll(async () => {
    await stack.stop();
    await llm.close();
  });

  const send = (chat: string, body: Record<string, unknown>) => stack.post('/v1/messages?wait=20', { chat_id: chat, user_id: 'u1', text: '', ...body });

  it('takes base64 files: the image reaches the model, the document the workspace, and a retry stores nothing twice', async () => {
    llm.handler = (request) => ({ text: `saw ${imageUrls(request).length}: ${request.lastUserText}` });
    const body = {
      text: 'compare these',
      idempotency_key: 'k1',
      attachments: [
        { name: 'dash.png', mime: 'image/png', data: PNG.toString('base64') },
        { name: 'errors.csv', data: CSV.toString('base64') },
      ],
    };
    const response = await send('api-files', body);
    expect(response.status).toBe(200);
    expect(response.body.reply.text).toMatch(/^saw 1: compare these/);
    expect(response.body.reply.text).toContain(`[file attached: attachments/${sha256(CSV).slice(0, 8)}-errors.csv, text/csv`);
    const count = async () => (await stack.database.db.selectFrom('event_attachments').select('event_id').execute()).length;
    expect(await count()).toBe(2);
    const again = await send('api-files', body);
    expect(again.body.event_id).toBe(response.body.event_id);
    expect(await count()).toBe(2);
  });

  it('refuses a url to a private address, an oversized file and a lying extension with a 4xx naming the file, storing nothing', async () => {
    const before = (await stack.database.db.selectFrom('blobs').select('sha256').execute()).length;
    const ssrf = await send('api-refusals', { text: 'look', attachments: [{ name: 'meta.json', url: 'http://169.254.169.254/latest/meta-data/' }] });
    expect(ssrf.status).toBe(400);
    expect(ssrf.body.error.field).toBe('attachments.0');
    expect(ssrf.body.error.message).toMatch(/link-local/);
    const loopback = await send('api-refusals', { text: 'look', attachments: [{ name: 'health.json', url: `${stack.url}/healthz` }] });
    expect(loopback.status).toBe(400);
    expect(loopback.body.error.message).toMatch(/loopback/);
    const big = await send('api-refusals', {
      text: 'log',
      attachments: [
        { name: 'PNG.png', data: PNG.toString('base64') },
        { name: 'big.log', data: Buffer.alloc(1_200_000, 'a').toString('base64') },
      ],
    });
    expect(big.status).toBe(413);
    expect(big.body.error.field).toBe('attachments.1');
    const lying = await send('api-refusals', { text: 'invoice', attachments: [{ name: 'invoice.pdf', data: PNG.toString('base64') }] });
    expect(lying.status).toBe(400);
    expect(lying.body.error.message).toMatch(/invoice\.pdf is not what its name says/);
    const both = await send('api-refusals', { text: 'x', attachments: [{ name: 'a.txt', data: 'YQ==', url: 'https://example.com/a.txt' }] });
    expect(both.status).toBe(400);
    expect((await stack.database.db.selectFrom('blobs').select('sha256').execute()).length).toBe(before);
    expect((await stack.database.db.selectFrom('inbound_events').select('id').execute()).length).toBe(1);
  });

  it('prunes bytes no message points at any more, past the grace period, and keeps the rest', async () => {
    const db = stack.database.db;
    const orphan = Buffer.from('nobody refers to me');
    await putBlob(db, orphan, 'text/plain');
    await db
      .updateTable('blobs')
      .set({ created_at: new Date(Date.now() - 2 * BLOB_GRACE_MS) })
      .execute();
    expect(await pruneBlobs(db)).toBe(1);
    const left = (await db.selectFrom('blobs').select('sha256').execute()).map((row) => row.sha256).sort();
    expect(left).toEqual([sha256(PNG), sha256(CSV)].sort());
  });
});

describe('attachments through Discord (issue 36)', () => {
  const ALICE_ID = '500000000000000001';
  const DM = '600000000000000001';
  let llm: FakeLLM;
  let discord: FakeDiscord;
  let stack: Stack;
  beforeAll(async () => {
    llm = await startFakeOpenAI();
    discord = await startFakeDiscord();
    stack = await startStack({ model: llm, env: { ...discord.env, DISCORD_ALLOWED_USERS: ALICE_ID, HERALD_DELIVERY_POLL_MS: '100', HERALD_MODEL_VISION: 'on' } });
    await discord.ready();
  });
  afterAll(async () => {
    await stack.stop();
    await discord.close();
    await llm.close();
  });

  it('downloads an attachment from the CDN and gives the image to the model', async () => {
    llm.handler = (request) => ({ text: `saw ${imageUrls(request).length}` });
    discord.userMessage({ channelId: DM, userId: ALICE_ID, content: '', dm: true, attachments: [{ name: 'graph.png', bytes: PNG, contentType: 'image/png' }] });
    const [reply] = await waitFor(async () => (discord.botMessages(DM).length > 0 ? discord.botMessages(DM) : undefined), { what: 'a reply' });
    expect(reply?.content).toBe('saw 1');
    expect(imageUrls(llm.requests.at(-1)!)).toEqual([`data:image/png;base64,${PNG.toString('base64')}`]);
    expect(llm.requests.at(-1)?.lastUserText).toContain(`attachments/${sha256(PNG).slice(0, 8)}-graph.png`);
  });

  it('sends a workspace file back as a message attachment with send_file, bytes intact', async () => {
    const channel = '600000000000000002';
    llm.handler = toolThenReport(() => [
      { name: 'write_file', arguments: { path: 'chart.svg', content: '<svg xmlns="http://www.w3.org/2000/svg"/>' } },
      { name: 'send_file', arguments: { path: 'chart.svg', caption: 'the chart' } },
    ]);
    discord.userMessage({ channelId: channel, userId: ALICE_ID, content: 'draw it', dm: true });
    const sent = await waitFor(async () => discord.botMessages(channel).find((message) => message.files !== undefined), { what: 'an attachment from the bot' });
    expect(sent.content).toBe('the chart');
    expect(sent.files?.[0]?.name).toBe('chart.svg');
    expect(sent.files?.[0]?.bytes.toString('utf8')).toBe('<svg xmlns="http://www.w3.org/2000/svg"/>');
  });
});

describe('files out: send_file (issue 36)', () => {
  let llm: FakeLLM;
  let telegram: FakeTelegram;
  let stack: Stack;
  beforeAll(async () => {
    llm = await startFakeOpenAI();
    telegram = await startFakeTelegram();
    stack = await startStack({
      model: llm,
      env: { ...telegram.env, HERALD_DELIVERY_POLL_MS: '100', TELEGRAM_MODE: 'webhook', TELEGRAM_WEBHOOK_SECRET: SECRET, TELEGRAM_ALLOWED_USERS: String(ALICE.id) },
    });
  });
  afterAll(async () => {
    await stack.stop();
    await telegram.close();
    await llm.close();
  });

  const post = (update: unknown) => stack.post('/telegram/webhook', update, { 'x-telegram-bot-api-secret-token': SECRET });

  it('sends a workspace file to Telegram as sendDocument, bytes intact, with its caption and a receipt', async () => {
    const report = Buffer.concat([Buffer.from('host,p99_ms\n'), Buffer.from([0xe2, 0x82, 0xac]), Buffer.from(',120\n')]);
    llm.handler = toolThenReport(() => [
      { name: 'write_file', arguments: { path: 'out/latency.csv', content: report.toString('utf8') } },
      { name: 'send_file', arguments: { path: 'out/latency.csv', caption: 'p99 by host' } },
    ]);
    await post(telegram.userMessage({ chatId: 50, from: ALICE, text: 'send me the latency table' }));
    const sent = await waitFor(async () => telegram.botMessages(50).find((message) => message.file !== undefined), { what: 'a document from the bot' });
    expect(sent.file?.method).toBe('sendDocument');
    expect(sent.file?.name).toBe('latency.csv');
    expect(sent.file?.bytes.equals(report)).toBe(true);
    expect(sent.text).toBe('p99 by host');
    const row = await waitFor(
      async () => {
        const found = await stack.database.db.selectFrom('outbox').select(['status', 'receipt', 'file']).where('source', '=', 'file').executeTakeFirst();
        return found?.status === 'delivered' ? found : undefined;
      },
      { what: 'the file row delivered' },
    );
    expect(row.file).toMatchObject({ sha256: sha256(report), name: 'latency.csv', mime: 'text/csv' });
    expect(row.receipt).toEqual({ messageIds: [String(sent.message_id)] });
  });

  it('refuses a path outside the workspace as a tool error, sending nothing', async () => {
    llm.handler = toolThenReport(() => [{ name: 'send_file', arguments: { path: '../../etc/passwd' } }]);
    await post(telegram.userMessage({ chatId: 51, from: ALICE, text: 'send me the passwords' }));
    const reply = await waitFor(async () => telegram.botMessages(51).find((message) => message.text.startsWith('results:')), { what: 'the report' });
    expect(reply.text).toMatch(/leaves your workspace/);
    expect(telegram.botMessages(51).some((message) => message.file !== undefined)).toBe(false);
  });
});

describe("a session's files over the API, for the console (issue 36 point 4)", () => {
  let llm: FakeLLM;
  let stack: Stack;
  beforeAll(async () => {
    llm = await startFakeOpenAI();
    stack = await startStack({ model: llm });
  });
  afterAll(async () => {
    await stack.stop();
    await llm.close();
  });

  const send = (chat: string, body: Record<string, unknown>) => stack.post('/v1/messages?wait=20', { chat_id: chat, user_id: 'u1', text: '', ...body });

  it("serves a session's files for the console: images typed for blob: display, other files as downloads, never rendered", async () => {
    const svg = Buffer.from('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>');
    llm.handler = () => ({ text: 'ok' });
    const response = await send('api-serve', {
      text: 'files',
      attachments: [
        { name: 'dash.png', data: PNG.toString('base64') },
        { name: 'logo.svg', data: svg.toString('base64') },
      ],
    });
    expect(response.status).toBe(200);
    const path = (bytes: Buffer, session = response.body.session_id as string) => `${stack.url}/v1/sessions/${session}/attachments/${sha256(bytes)}`;
    const fetchFile = (url: string) => fetch(url, { headers: { authorization: `Bearer ${stack.env.HERALD_API_TOKEN}` } });
    const image = await fetchFile(path(PNG));
    expect(image.status).toBe(200);
    expect(image.headers.get('content-type')).toBe('image/png');
    expect(image.headers.get('x-content-type-options')).toBe('nosniff');
    expect(Buffer.from(await image.arrayBuffer()).equals(PNG)).toBe(true);
    const file = await fetchFile(path(svg));
    expect(file.headers.get('content-type')).toBe('application/octet-stream');
    expect(file.headers.get('content-disposition')).toBe("attachment; filename*=UTF-8''logo.svg");
    expect(file.headers.get('content-security-policy')).toContain('sandbox');
    expect(Buffer.from(await file.arrayBuffer()).equals(svg)).toBe(true);
    // The bytes are stored, but not this other session's: a 404, as for bytes nobody sent.
    const other = await send('api-serve-other', { text: 'hello' });
    expect((await fetchFile(path(PNG, other.body.session_id as string))).status).toBe(404);
  });
});
