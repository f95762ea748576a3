import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI } from './support/fake-llm.ts';
import type { FakeLLM, FakeRequest } from './support/fake-llm.ts';
import { DeliveryError } from '@herald/delivery';
import { EmailSender } from '@herald/platforms/email';
import { startTestSmtp } from './support/smtp-server.ts';
import type { TestSmtp } from './support/smtp-server.ts';
import { HERALD_BIN, PROCESS_START_MS, startStack, waitFor } from './support/stack.ts';
import type { Stack } from './support/stack.ts';

const exec = promisify(execFile);

const REPORT = '# Morning\n\nAll **green** today:\n\n- builds: 12\n- alerts: none\n\n<script>alert(1)</script>';

// Issue 33, point 5: cron reports by e-mail, through a real SMTP server the test starts.
describe('cron reports by e-mail', { timeout: 3 * PROCESS_START_MS }, () => {
  let llm: FakeLLM;
  let smtp: TestSmtp;
  let stack: Stack;
  const toolResults: string[] = [];

  beforeAll(async () => {
    llm = await startFakeOpenAI();
    // Cron runs answer with the report; a person's "cronjob: {...}" calls the tool with that JSON.
    llm.handler = (request: FakeRequest) => {
      const last = request.messages[request.messages.length - 1];
      if (last?.role === 'tool') {
        toolResults.push(last.content);
        return { text: 'noted' };
      }
      const match = /cronjob: (\{.*\})/s.exec(request.lastUserText);
      if (match?.[1]) return { toolCalls: [{ name: 'cronjob', arguments: JSON.parse(match[1]) as Record<string, unknown> }] };
      return { text: REPORT };
    };
    smtp = await startTestSmtp();
    stack = await startStack({
      model: llm,
      scheduler: true,
      env: {
        HERALD_PROVIDER_MAX_RETRIES: '0',
        HERALD_DELIVERY_POLL_MS: '100',
        HERALD_SCHEDULER_TICK_MS: '100',
        HERALD_SMTP_URL: smtp.url,
        HERALD_MAIL_FROM: 'Herald Reports <reports@herald.example>',
        HERALD_MAIL_ALLOWED_DOMAINS: 'example.com,ops.example.org',
        HERALD_OPERATORS: 'api:42',
      },
    });
  }, 2 * PROCESS_START_MS);

  afterAll(async () => {
    await stack?.stop();
    await smtp?.close();
  });

  const createJob = async (body: Record<string, unknown>) => {
    const response = await stack.post('/v1/cron/jobs', { user_id: '42', schedule: 'every 1d', prompt: 'morning report', ...body });
    return response;
  };
  const runNow = async (jobId: string) => {
    const response = await stack.post(`/v1/cron/jobs/${jobId}/run`, {});
    expect(response.status).toBe(202);
    return response.body.run_id as string;
  };
  const waitForDeliveries = (jobId: string, runId: string, done: (deliveries: any[]) => boolean, what: string) =>
    waitFor(
      async () => {
        const runs = (await stack.get(`/v1/cron/jobs/${jobId}/runs`)).body.runs as any[];
        const run = runs.find((r) => r.run_id === runId);
        return run && run.deliveries.length > 0 && done(run.deliveries) ? run : undefined;
      },
      { timeoutMs: 40_000, what },
    );
  const jobCount = async () =>
    Number(
      (
        await stack.database.db
          .selectFrom('cron_jobs')
          .select((eb) => eb.fn.countAll().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );

  it('mails the report to each address, as HTML with a plain-text alternative, the job name as subject', async () => {
    const created = await createJob({ name: 'Morning digest', deliver: 'email:ops@example.com,Lead@Ops.Example.org' });
    expect(created.status).toBe(201);
    expect(created.body.deliver).toEqual(['email:ops@example.com', 'email:Lead@ops.example.org']);
    const runId = await runNow(created.body.job_id);
    const run = await waitForDeliveries(created.body.job_id, runId, (d) => d.length === 2 && d.every((x) => x.status === 'delivered'), 'two mails delivered');
    expect(run.deliveries.map((d: any) => d.target).sort()).toEqual(['email:Lead@ops.example.org', 'email:ops@example.com']);
    const mails = smtp.received.filter((m) => m.mail.subject === 'Morning digest');
    expect(mails.map((m) => m.envelopeTo).sort()).toEqual([['Lead@ops.example.org'], ['ops@example.com']]);
    const mail = mails[0]!.mail;
    expect(mail.from?.value[0]).toMatchObject({ address: 'reports@herald.example', name: 'Herald Reports' });
    expect(mail.text).toContain('All **green** today:');
    expect(mail.html).toContain('<strong>green</strong>');
    expect(mail.html).toContain('<li>builds: 12</li>');
    // The model's raw HTML is shown as text, never rendered.
    expect(mail.html).not.toContain('<script>');
    expect(mail.html).toContain('&lt;script&gt;');
    // Each delivery's receipt is the Message-ID the server took.
    expect(run.deliveries[0].receipt.messageIds[0]).toMatch(/^<[0-9a-f]{32}@herald\.example>$/);
    expect(mails.map((m) => m.mail.messageId).sort()).toEqual(run.deliveries.map((d: any) => d.receipt.messageIds[0]).sort());
  });

  it('records a permanent refusal (550) with the server reason and does not retry it', async () => {
    smtp.refuse('gone@example.com', 550, 'No such user here');
    const created = await createJob({ name: 'To nobody', deliver: 'email:gone@example.com' });
    expect(created.status).toBe(201);
    const runId = await runNow(created.body.job_id);
    const run = await waitForDeliveries(created.body.job_id, runId, (d) => d[0].status === 'failed', 'the refusal recorded');
    expect(run.deliveries[0]).toMatchObject({ target: 'email:gone@example.com', status: 'failed', attempts: 1 });
    expect(run.deliveries[0].error).toMatch(/550.*No such user here/);
    // Still one attempt a while later: nothing retried it.
    await new Promise((resolve) => setTimeout(resolve, 2500));
    expect(smtp.attempts('gone@example.com')).toBe(1);
  });

  it('retries a temporary refusal (451) with backoff, then delivers', async () => {
    smtp.refuse('busy@example.com', 451, 'Greylisted, try again later', 1);
    const created = await createJob({ name: 'Greylisted report', deliver: 'email:busy@example.com' });
    const runId = await runNow(created.body.job_id);
    const run = await waitForDeliveries(created.body.job_id, runId, (d) => d[0].status === 'delivered', 'delivered after the retry');
    expect(run.deliveries[0]).toMatchObject({ status: 'delivered', attempts: 2 });
    expect(smtp.attempts('busy@example.com')).toBe(2);
    expect(smtp.received.filter((m) => m.mail.subject === 'Greylisted report')).toHaveLength(1);
  });

  it('refuses a bad address when the job is saved, naming the field, and writes nothing', async () => {
    const before = await jobCount();
    for (const deliver of ['email:not-an-address', 'email:a@b.com\r\nBcc: x@example.com', 'email:', 'email:a@example.com,<x@example.com>', 'email:a@exa mple.com']) {
      const response = await createJob({ deliver });
      expect(response.status, deliver).toBe(400);
      expect(response.body.error.field).toBe('deliver');
      expect(response.body.error.message).toMatch(/^deliver: /);
    }
    expect(await jobCount()).toBe(before);
  });

  it('refuses a domain outside HERALD_MAIL_ALLOWED_DOMAINS at save, for operators too, and anyone may mail inside it', async () => {
    const before = await jobCount();
    // The owner, api:42, is an operator: the list binds operators too.
    const outside = await createJob({ deliver: 'email:someone@elsewhere.net' });
    expect(outside.status).toBe(400);
    expect(outside.body.error.message).toMatch(/deliver: email:someone@elsewhere\.net is outside the allowed domains/);
    // A look-alike is no subdomain.
    expect((await createJob({ deliver: 'email:x@notexample.com' })).status).toBe(400);
    expect(await jobCount()).toBe(before);
    const person = await createJob({ user_id: '77', deliver: 'email:me@example.com' });
    expect(person.status).toBe(201);
  });

  it(
    'the cronjob tool and herald cron refuse the same bad addresses and domains',
    async () => {
      const ask = async (args: Record<string, unknown>) => {
        const response = await stack.post('/v1/messages?wait=30', { chat_id: 'chat-42', user_id: '42', text: `cronjob: ${JSON.stringify(args)}` });
        expect(response.status).toBe(200);
        return JSON.parse(toolResults[toolResults.length - 1] ?? '{}');
      };
      const before = await jobCount();
      expect(await ask({ action: 'create', prompt: 'x', schedule: 'every 1d', deliver: 'email:no-at-sign' })).toMatchObject({
        success: false,
        error: expect.stringMatching(/^deliver: 'no-at-sign' is not a mail address/),
      });
      expect(await ask({ action: 'create', prompt: 'x', schedule: 'every 1d', deliver: 'email:a@elsewhere.net' })).toMatchObject({
        success: false,
        error: expect.stringMatching(/^deliver: email:a@elsewhere\.net is outside the allowed domains/),
      });
      const env = { ...process.env, ...stack.env, LOG_LEVEL: 'silent' };
      await expect(exec(process.execPath, [HERALD_BIN, 'cron', 'add', '--user', '42', '--schedule', 'every 1d', '--prompt', 'x', '--deliver', 'email:x@elsewhere.net'], { env })).rejects.toMatchObject(
        {
          code: 2,
          stderr: expect.stringMatching(/deliver: email:x@elsewhere\.net is outside the allowed domains/),
        },
      );
      expect(await jobCount()).toBe(before);
      const saved = await ask({ action: 'create', prompt: 'x', schedule: 'every 1d', name: 'by tool', deliver: 'email:team@example.com' });
      expect(saved).toMatchObject({ success: true, job: { deliver: ['email:team@example.com'] } });
    },
    2 * PROCESS_START_MS,
  );
});

describe('the e-mail sender on its own', () => {
  let smtp: TestSmtp;
  beforeAll(async () => {
    smtp = await startTestSmtp();
  });
  afterAll(async () => {
    await smtp.close();
  });

  const progress = () => {
    const partsSent: string[] = [];
    return {
      partsSent,
      inFlight: null,
      beginPart: async (part: number) => ({ part, marker: 'm', anchor: null }),
      partSent: async (_part: number, id: string) => void partsSent.push(id),
      clearInFlight: async () => undefined,
      recentChatMessageIds: async () => [],
    };
  };
  const item = (to: string) => ({
    id: '1',
    idempotencyKey: `cron:run:email:${to}`,
    platform: 'email',
    target: { chatId: to, title: 'Weekly' },
    text: 'hi',
    sessionId: null,
    source: 'cron',
    attempts: 1,
    drafts: [],
    progress: progress(),
  });
  const sender = (url: string, allowedDomains: string[] = []) => new EmailSender({ smtpUrl: url, from: 'reports@herald.example', allowedDomains });

  it('retries a refused login and never puts the password in the reason', async () => {
    const wrong = smtp.url.replace(smtp.password, 'not-the-password-9z');
    const error = await sender(wrong)
      .send(item('a@example.com'), AbortSignal.timeout(10_000))
      .catch((e: unknown) => e);
    expect(DeliveryError.isInstance(error)).toBe(true);
    expect(error).toMatchObject({ retryable: true, ambiguous: false, message: expect.stringMatching(/^SMTP login failed/) });
    expect(String((error as Error).message)).not.toContain('not-the-password-9z');
  });

  it('refuses for good, without connecting, an address outside the allowed domains or a stored target that is no address', async () => {
    const before = smtp.attempts('x@elsewhere.net');
    await expect(sender(smtp.url, ['example.com']).send(item('x@elsewhere.net'), AbortSignal.timeout(10_000))).rejects.toMatchObject({
      retryable: false,
      message: expect.stringMatching(/outside HERALD_MAIL_ALLOWED_DOMAINS/),
    });
    await expect(sender(smtp.url).send(item('a@b.com>\r\nBcc: c@d.com'), AbortSignal.timeout(10_000))).rejects.toMatchObject({ retryable: false });
    expect(smtp.attempts('x@elsewhere.net')).toBe(before);
  });
});
