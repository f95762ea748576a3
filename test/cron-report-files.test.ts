import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI } from './support/fake-llm.ts';
import type { FakeLLM, FakeRequest } from './support/fake-llm.ts';
import { startFakeTelegram } from './support/fake-telegram.ts';
import type { FakeTelegram } from './support/fake-telegram.ts';
import { startTestSmtp } from './support/smtp-server.ts';
import type { TestSmtp } from './support/smtp-server.ts';
import { PROCESS_START_MS, startStack, waitFor } from './support/stack.ts';
import type { Stack } from './support/stack.ts';

// UTF-8 and CRLF: a mail transfer that re-encodes text or normalises line ends would change them.
const CSV = 'host,status,note\r\nweb-1,ok,grün\r\nweb-2,down,"disk 98%"\r\n';

// Issue 36, point 3: a cron report carries the files its run produced; by e-mail as attachments.
describe('files on cron reports', { timeout: 3 * PROCESS_START_MS }, () => {
  let llm: FakeLLM;
  let smtp: TestSmtp;
  let telegram: FakeTelegram;
  let stack: Stack;
  const toolResults: string[] = [];

  beforeAll(async () => {
    llm = await startFakeOpenAI();
    // A scheduled run writes a CSV, sends it, then answers with the report's text.
    llm.handler = (request: FakeRequest) => {
      const tools = request.messages.filter((m) => m.role === 'tool');
      const last = request.messages[request.messages.length - 1];
      if (last?.role === 'tool') toolResults.push(last.content);
      if (tools.length === 0) return { toolCalls: [{ name: 'write_file', arguments: { path: 'out/disk-report.csv', content: CSV } }] };
      if (tools.length === 1) return { toolCalls: [{ name: 'send_file', arguments: { path: 'out/disk-report.csv', caption: 'ignored in a report' } }] };
      return { text: 'Disk report: web-2 is down. The CSV is attached.' };
    };
    smtp = await startTestSmtp();
    telegram = await startFakeTelegram();
    stack = await startStack({
      model: llm,
      scheduler: true,
      env: {
        HERALD_PROVIDER_MAX_RETRIES: '0',
        HERALD_DELIVERY_POLL_MS: '100',
        HERALD_SCHEDULER_TICK_MS: '100',
        HERALD_SMTP_URL: smtp.url,
        HERALD_MAIL_FROM: 'Herald Reports <reports@herald.example>',
        HERALD_MAIL_ALLOWED_DOMAINS: 'example.com',
        HERALD_OPERATORS: 'api:42',
        ...telegram.env,
        TELEGRAM_MODE: 'webhook',
        TELEGRAM_WEBHOOK_SECRET: 'report-files_1',
        TELEGRAM_ALLOWED_USERS: '*',
      },
    });
  }, 2 * PROCESS_START_MS);

  afterAll(async () => {
    await stack?.stop();
    await smtp?.close();
    await telegram?.close();
    await llm?.close();
  });

  const createJob = async (name: string, deliver: string) => {
    const created = await stack.post('/v1/cron/jobs', { user_id: '42', schedule: 'every 1d', prompt: 'disk report', name, deliver });
    expect(created.status).toBe(201);
    const jobId = created.body.job_id as string;
    expect((await stack.post(`/v1/cron/jobs/${jobId}/run`, {})).status).toBe(202);
    return jobId;
  };

  it('mails the report with the CSV the run sent as an attachment, bytes intact', async () => {
    const jobId = await createJob('Disk report', 'email:ops@example.com');
    const mail = await waitFor(async () => smtp.received.find((m) => m.mail.subject === 'Disk report'), { timeoutMs: 40_000, what: 'the report mail' });

    expect(toolResults.some((text) => text.includes('Attached disk-report.csv (text/csv') && text.includes("to this run's report"))).toBe(true);
    expect(mail.envelopeTo).toEqual(['ops@example.com']);
    expect(mail.mail.text).toContain('web-2 is down');
    expect(mail.mail.attachments).toHaveLength(1);
    const attachment = mail.mail.attachments[0]!;
    expect(attachment.filename).toBe('disk-report.csv');
    expect(attachment.contentType).toBe('text/csv');
    expect(attachment.contentDisposition).toBe('attachment');
    expect(Buffer.compare(attachment.content, Buffer.from(CSV, 'utf8'))).toBe(0);

    // The run records the file, and the report went out once (one delivery, no separate file row for mail).
    const row = await stack.database.db.selectFrom('cron_runs').select(['files']).where('job_id', '=', jobId).executeTakeFirstOrThrow();
    expect(row.files.map((f) => f.name)).toEqual(['disk-report.csv']);
    const runs = (await stack.get(`/v1/cron/jobs/${jobId}/runs`)).body.runs as { deliveries: { target: string; status: string }[] }[];
    expect(runs[0]!.deliveries.map((d) => d.target)).toEqual(['email:ops@example.com']);
  });

  it('posts the report to a Telegram chat, then the CSV as a document after it', async () => {
    // The fake knows a chat once someone wrote in it.
    telegram.userMessage({ chatId: 71, from: { id: 71, first_name: 'Ops' }, text: 'hello' });
    const jobId = await createJob('Disk report to chat', 'telegram:71');
    const sent = await waitFor(async () => telegram.botMessages(71).find((message) => message.file !== undefined), { timeoutMs: 40_000, what: 'the document' });
    const messages = telegram.botMessages(71);
    expect(messages).toHaveLength(2);
    expect(messages[0]!.text).toContain('web-2 is down');
    expect(messages[1]).toBe(sent);
    expect(sent.file?.method).toBe('sendDocument');
    expect(sent.file?.name).toBe('disk-report.csv');
    expect(sent.file?.bytes.equals(Buffer.from(CSV, 'utf8'))).toBe(true);
    const runs = (await stack.get(`/v1/cron/jobs/${jobId}/runs`)).body.runs as { deliveries: { target: string; status: string }[] }[];
    expect(runs[0]!.deliveries.map((d) => d.target)).toEqual(['telegram:71', 'telegram:71:file:0']);
  });
});
