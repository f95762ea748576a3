import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { DRAFT_CURSOR } from '@herald/platforms';
import { telegramChunks } from '@herald/platforms/telegram';
import { startFakeOpenAI } from './support/fake-llm.ts';
import type { FakeLLM } from './support/fake-llm.ts';
import { startFakeTelegram } from './support/fake-telegram.ts';
import type { FakeTelegram } from './support/fake-telegram.ts';
import { PROCESS_START_MS, startStack, stopProcess, waitFor } from './support/stack.ts';
import type { Stack } from './support/stack.ts';

// Issue 35 point 4: a worker killed while it streams an answer into a chat leaves neither a
// duplicate nor a stale draft: the turn resumes elsewhere and the chat ends with one answer.

const ALICE = { id: 42, username: 'alice' };
const LONG = Array.from({ length: 80 }, (_, i) => `point${i}`).join(' ');

describe('a chat answer whose worker is SIGKILLed mid-stream', { timeout: 4 * PROCESS_START_MS }, () => {
  let llm: FakeLLM;
  let telegram: FakeTelegram;
  let stack: Stack;
  beforeAll(async () => {
    llm = await startFakeOpenAI();
    telegram = await startFakeTelegram();
    stack = await startStack({
      model: llm,
      workerProcesses: true,
      env: { ...telegram.env, TELEGRAM_ALLOWED_USERS: String(ALICE.id), HERALD_DELIVERY_POLL_MS: '100', HERALD_LEASE_TTL_MS: '1500' },
    });
    await stack.startProcess('worker');
  }, 2 * PROCESS_START_MS);
  afterAll(async () => {
    await stack.stop();
    await telegram.close();
  });

  it('ends with exactly one message in the chat, the committed reply', async () => {
    llm.handler = () => ({ text: LONG, chunkDelayMs: 60 });
    telegram.userMessage({ chatId: 42, from: ALICE, text: 'explain it all' });
    // The draft is in the chat and has been edited at least once: the answer is growing.
    await waitFor(async () => (telegram.calls.some((call) => call.method === 'editMessageText') ? true : undefined), { what: 'a draft edit', timeoutMs: 30_000 });
    const [draft] = telegram.botMessages(42);
    expect(draft?.text.endsWith(DRAFT_CURSOR)).toBe(true);
    const lease = await stack.database.db.selectFrom('session_leases').select('owner').executeTakeFirstOrThrow();
    const victim = stack.processes().find((worker) => worker.child.pid === Number(lease.owner.split(':')[1]))!;
    await stopProcess(victim, 'SIGKILL');
    llm.handler = () => ({ text: LONG, chunkDelayMs: 5 });
    await stack.startProcess('worker');
    await waitFor(
      () =>
        stack.database.db
          .selectFrom('outbox')
          .select('id')
          .where(sql<string>`target ->> 'chatId'`, '=', '42')
          .where('status', '=', 'delivered')
          .executeTakeFirst(),
      { what: 'the reply delivered', timeoutMs: 60_000 },
    );
    const messages = telegram.botMessages(42);
    expect(messages.map((m) => m.text)).toEqual([telegramChunks(LONG)[0]!.html]);
    expect(messages[0]!.message_id).toBe(draft!.message_id);
    expect(await stack.database.db.selectFrom('chat_drafts').select('reply_key').execute()).toEqual([]);
  });
});
