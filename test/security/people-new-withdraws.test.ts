import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WITHDRAWN_BY_NEW } from '@herald/waits';
import { startFakeOpenAI } from '../support/fake-llm.ts';
import type { FakeLLM, FakeReply, FakeRequest } from '../support/fake-llm.ts';
import { startFakeTelegram } from '../support/fake-telegram.ts';
import type { FakeTelegram } from '../support/fake-telegram.ts';
import { openChatsEnv } from '../support/chat-platforms-env.ts';
import { startStack, waitFor } from '../support/stack.ts';
import type { Stack } from '../support/stack.ts';

/**
 * Issue 39, LOW: with one turn in flight per person, Alice's approval parked in a group must not
 * outlive Bob's /new there: the ended session's pending approval is withdrawn (denied, with the
 * reason), Alice's turn ends at once instead of at the approval timeout, and her next message is
 * taken instead of being refused for the turn still in flight.
 */

const SECRET = 'people-new-withdraws_1';
const ALICE = { id: 72, username: 'alice' };
const BOB = { id: 73, username: 'bob' };
const GROUP = -100_720;

function pays(request: FakeRequest): FakeReply {
  const last = request.messages.at(-1);
  if (last?.role === 'tool') return { text: `done: ${last.content.slice(0, 200)}` };
  if (request.lastUserText.includes('pay ')) return { toolCalls: [{ name: 'wire_transfer', arguments: { label: 'rent', amount: 900 } }] };
  return { text: `echo: ${request.lastUserText}` };
}

describe("/new in a group withdraws another member's parked approval", () => {
  let llm: FakeLLM;
  let telegram: FakeTelegram;
  let stack: Stack;

  beforeAll(async () => {
    llm = await startFakeOpenAI({ handler: pays });
    telegram = await startFakeTelegram();
    // An approval that would otherwise hold the turn for ten minutes.
    stack = await startStack({ model: llm, testTools: true, env: { ...openChatsEnv(SECRET, telegram), HERALD_LIMIT_CONCURRENT_TURNS: '1', HERALD_APPROVAL_TIMEOUT_MS: '600000' } });
  });
  afterAll(async () => {
    await stack.stop();
    await telegram.close();
  });

  const send = async (from: { id: number; username: string }, text: string) => {
    const mention = !text.startsWith('/');
    const update = telegram.userMessage({ chatId: GROUP, chatType: 'group', from, text: mention ? `@${telegram.bot.username} ${text}` : text, mentionBot: mention });
    expect((await stack.post('/telegram/webhook', update, { 'x-telegram-bot-api-secret-token': SECRET })).status).toBe(200);
  };
  const aliceEvents = () =>
    stack.database.db.selectFrom('inbound_events').select(['text', 'status']).where('user_id', '=', `telegram:${ALICE.id}`).where('kind', '=', 'message').orderBy('received_at').execute();

  it("denies the parked approval with the reason, ends Alice's turn, and takes her next message", async () => {
    await send(ALICE, 'pay the rent');
    const wait = await waitFor(async () => stack.database.db.selectFrom('tool_waits').select(['id', 'status']).where('kind', '=', 'approval').where('status', '=', 'pending').executeTakeFirst(), {
      what: 'the parked approval',
    });
    await send(BOB, '/new');
    const withdrawn = await waitFor(
      async () => {
        const row = await stack.database.db.selectFrom('tool_waits').select(['status', 'answer', 'answered_by']).where('id', '=', wait.id).executeTakeFirstOrThrow();
        return row.status === 'pending' ? undefined : row;
      },
      { what: 'the approval withdrawn' },
    );
    expect(withdrawn).toEqual({ status: 'denied', answer: WITHDRAWN_BY_NEW, answered_by: `telegram:${BOB.id}` });
    // Her turn ended (its reply says the call was denied): nothing of hers is in flight any more.
    await waitFor(async () => ((await aliceEvents()).every((event) => event.status === 'done') ? true : undefined), { what: "Alice's turn to end" });

    const seen = telegram.botMessages(GROUP).length;
    await send(ALICE, 'hello again');
    const answer = await waitFor(
      async () =>
        telegram
          .botMessages(GROUP)
          .slice(seen)
          .find((message) => message.text.startsWith('echo: hello again') || message.text.startsWith('Not taken')),
      { what: 'the answer to Alice' },
    );
    expect(answer.text).toBe('echo: hello again');
  });
});
