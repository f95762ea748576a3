import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI } from '../support/fake-llm.ts';
import type { FakeLLM } from '../support/fake-llm.ts';
import { startFakeTelegram } from '../support/fake-telegram.ts';
import type { FakeTelegram } from '../support/fake-telegram.ts';
import { HERALD_BIN, PROCESS_START_MS, startStack, waitFor } from '../support/stack.ts';
import type { Stack } from '../support/stack.ts';

const exec = promisify(execFile);
const SECRET = 'edge-secret_1';
const PERSON = { id: 4242, username: 'dana' };

/** Forged and malformed updates, each with what makes it so; a bot could receive any of these. */
function forgedUpdates(telegram: FakeTelegram, chatId: number) {
  const from = { id: PERSON.id, is_bot: false, first_name: 'Dana' };
  const message = { message_id: 1, date: 1, chat: { id: chatId, type: 'private' }, from, text: 'x' };
  return [
    // A button press whose data names no real wait: hw: and a malformed id.
    { callback_query: { id: 'cq-1', from, chat_instance: '1', data: `hw:${'-'.repeat(36)}:once`, message } },
    { callback_query: { id: 'cq-2', from, chat_instance: '1', data: "hw:1' OR '1'='1:deny", message } },
    // Missing fields: a message without its chat, a button press without a message's chat.
    { message: { message_id: 2, date: 1, from, text: 'no chat here' } },
    { callback_query: { id: 'cq-3', from, chat_instance: '1', data: 'hw:x:once', message: { message_id: 3, date: 1 } } },
    // A text holding NUL, which Postgres text refuses.
    { message: { ...message, message_id: 4, text: 'nul \u0000 inside' } },
  ].map((update) => telegram.rawUpdate(update));
}

async function startTelegramStack(mode: 'webhook' | 'polling'): Promise<{ llm: FakeLLM; telegram: FakeTelegram; stack: Stack }> {
  const llm = await startFakeOpenAI({ handler: (request) => ({ text: `ok: ${request.lastUserText}` }) });
  const telegram = await startFakeTelegram();
  const env: Record<string, string> = mode === 'webhook' ? { TELEGRAM_MODE: 'webhook', TELEGRAM_WEBHOOK_SECRET: SECRET } : { TELEGRAM_MODE: 'polling', TELEGRAM_POLL_TIMEOUT_SECONDS: '1' };
  const stack = await startStack({ model: llm, env: { ...telegram.env, TELEGRAM_ALLOWED_USERS: '*', HERALD_DELIVERY_POLL_MS: '100', ...env } });
  return { llm, telegram, stack };
}

describe('no poison messages: Telegram updates (issue 17, point 3)', () => {
  describe('webhook mode', () => {
    let env: Awaited<ReturnType<typeof startTelegramStack>>;
    beforeAll(async () => {
      env = await startTelegramStack('webhook');
    });
    afterAll(async () => {
      await env?.stack.stop();
      await env?.telegram.close();
      await env?.llm.close();
    });

    it('answers 200 to forged and malformed updates, dead-letters what fails with its reason, and goes on', async () => {
      const { stack, telegram } = env;
      const headers = { 'x-telegram-bot-api-secret-token': SECRET };
      const forged = forgedUpdates(telegram, 77);
      for (const update of forged) {
        const response = await stack.post('/telegram/webhook', update, headers);
        expect(response.status, JSON.stringify(response.body)).toBe(200);
      }
      // Telegram delivers again what it is unsure of: a dead letter is skipped, still 200.
      const again = await stack.post('/telegram/webhook', forged[2], headers);
      expect(again.body).toEqual({ ok: true, outcome: 'dead_letter' });

      const letters = (await stack.get('/v1/admin/dead-letters')).body.dead_letters as any[];
      const updates = letters.filter((letter) => letter.kind === 'telegram_update');
      expect(updates.map((letter) => letter.id).sort()).toEqual([`telegram:123456:${forged[2].update_id}`, `telegram:123456:${forged[3].update_id}`].sort());
      for (const letter of updates) {
        expect(letter.reason).toMatch(/^TypeError: /);
        expect(letter.failures).toBe(2);
      }
      expect((await stack.get('/v1/admin/status')).body.dead_letters.telegram_updates).toBe(2);

      // The NUL message was taken, without the NUL; and a person's next message is answered.
      const nul = await stack.database.db.selectFrom('inbound_events').select('text').where('dedupe_key', '=', `telegram:123456:${forged[4].update_id}`).executeTakeFirst();
      expect(nul?.text).toBe('nul  inside');
      const next = telegram.userMessage({ chatId: 78, from: PERSON, text: 'still there?' });
      expect((await stack.post('/telegram/webhook', next, headers)).status).toBe(200);
      await waitFor(async () => (telegram.botMessages(78).length > 0 ? true : undefined), { what: 'the answer after the dead letters' });
      expect(telegram.botMessages(78).map((m) => m.text)).toEqual(['ok: still there?']);
    });

    it(
      'shows the dead letters through `herald dead-letters`',
      async () => {
        const { stack } = env;
        const cliEnv = { ...process.env, ...stack.env, HERALD_URL: stack.url, LOG_LEVEL: 'silent' };
        const { stdout } = await exec(process.execPath, [HERALD_BIN, 'dead-letters'], { env: cliEnv });
        expect(stdout).toMatch(/^failed at +kind +id +failures +reason\n/);
        expect(stdout).toMatch(/telegram_update +telegram:123456:\d+ +2 +TypeError: /);
        const json = JSON.parse((await exec(process.execPath, [HERALD_BIN, 'dead-letters', '--json'], { env: cliEnv })).stdout);
        expect(json.filter((letter: any) => letter.kind === 'telegram_update')).toHaveLength(2);
      },
      PROCESS_START_MS * 2,
    );
  });

  describe('polling mode', () => {
    let env: Awaited<ReturnType<typeof startTelegramStack>>;
    beforeAll(async () => {
      env = await startTelegramStack('polling');
    });
    afterAll(async () => {
      await env?.stack.stop();
      await env?.telegram.close();
      await env?.llm.close();
    });

    it('records a failing update, skips it, and the poller moves on to the next', async () => {
      const { stack, telegram } = env;
      const forged = forgedUpdates(telegram, 87);
      telegram.userMessage({ chatId: 88, from: PERSON, text: 'after the poison' });
      await waitFor(async () => (telegram.botMessages(88).length > 0 ? true : undefined), { what: 'the answer after the forged updates' });
      expect(telegram.botMessages(88).map((m) => m.text)).toEqual(['ok: after the poison']);
      const letters = (await stack.get('/v1/admin/dead-letters')).body.dead_letters as any[];
      expect(
        letters
          .filter((letter) => letter.kind === 'telegram_update')
          .map((letter) => letter.id)
          .sort(),
      ).toEqual([`telegram:123456:${forged[2].update_id}`, `telegram:123456:${forged[3].update_id}`].sort());
      // The offset moved past every forged update: Telegram is never asked for them again.
      const last = forged[forged.length - 1].update_id;
      await waitFor(async () => (telegram.calls.some((call) => call.method === 'getUpdates' && Number(call.body.offset) > last) ? true : undefined), {
        what: 'a poll past the forged updates',
      });
    });
  });
});

describe('no poison messages: run jobs (issue 17, point 3)', () => {
  let llm: FakeLLM;
  let stack: Stack;
  beforeAll(async () => {
    llm = await startFakeOpenAI({ handler: (request) => ({ text: request.lastUserText === 'poison' ? 'a POISON reply' : `ok: ${request.lastUserText}` }) });
    stack = await startStack({ model: llm, scheduler: true });
    // The database refuses this one reply every time, as it refused a NUL before: a turn that
    // fails at its last write the same way on every attempt.
    await sql`
      CREATE FUNCTION test_poison() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.role = 'assistant' AND NEW.content LIKE '%POISON%' THEN RAISE EXCEPTION 'poisoned reply refused by the test trigger'; END IF;
        RETURN NEW;
      END $$`.execute(stack.database.db);
    await sql`CREATE TRIGGER test_poison BEFORE INSERT ON messages FOR EACH ROW EXECUTE FUNCTION test_poison()`.execute(stack.database.db);
  });
  afterAll(async () => {
    await stack?.stop();
    await llm?.close();
  });

  it('dead-letters a turn that fails twice the same way, answers with the reason, and answers the next message', async () => {
    const posted = await stack.post('/v1/messages', { chat_id: 'poison-1', user_id: 'u1', text: 'poison' });
    expect(posted.status).toBe(202);
    const event = await waitFor(
      async () => {
        const body = (await stack.get(`/v1/events/${posted.body.event_id}`)).body;
        return body.status === 'failed' ? body : undefined;
      },
      { what: 'the poisoned event to fail', timeoutMs: 60_000 },
    );
    expect(event.reply.text).toMatch(/^Sorry, I could not finish this: answering it failed twice the same way/);
    const sessionId = posted.body.session_id as string;
    // Once, then once more: never the endless retry that called the model again each time.
    expect(llm.requestsFor(sessionId)).toHaveLength(2);
    const letters = (await stack.get('/v1/admin/dead-letters')).body.dead_letters as any[];
    const run = letters.find((letter) => letter.kind === 'run');
    expect(run).toMatchObject({ session_id: sessionId, failures: 2 });
    expect(run.reason).toContain('poisoned reply refused by the test trigger');
    const turn = await stack.database.db.selectFrom('turns').select(['status', 'error']).where('session_id', '=', sessionId).executeTakeFirstOrThrow();
    expect(turn.status).toBe('failed');

    const next = await stack.post('/v1/messages?wait=60', { chat_id: 'poison-1', user_id: 'u1', text: 'hello again' });
    expect(next.body.reply?.text).toBe('ok: hello again');
    expect(llm.requestsFor(sessionId)).toHaveLength(3);
  }, 120_000);
});
