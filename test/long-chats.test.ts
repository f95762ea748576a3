import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SUMMARY_PREFIX } from '@herald/agent';
import { COMPRESS_WHILE_WAITING_REPLY } from '@herald/inbox';
import { startFakeOpenAI } from './support/fake-llm.ts';
import type { FakeLLM, FakeReply, FakeRequest } from './support/fake-llm.ts';
import { startStack } from './support/stack.ts';
import type { Stack } from './support/stack.ts';
import { assertNoOrphans, isSummaryRequest, longText, summariserThatKeeps } from './support/long-chat.ts';

// The fake model's window is small, so a chat outgrows it within a few dozen turns; Herald is told
// the same window (HERALD_CONTEXT_TOKENS) and compresses at 85% of it (the floor for small windows).
const WINDOW = 16_000;
const FACT = 'codename AZURE-FALCON-42';

describe('long conversations', () => {
  let fake: FakeLLM;
  let stack: Stack;
  beforeAll(async () => {
    fake = await startFakeOpenAI({ contextTokens: WINDOW });
    stack = await startStack({ model: fake, env: { HERALD_CONTEXT_TOKENS: String(WINDOW) } });
  });
  afterAll(async () => {
    await stack.stop();
  });

  const send = async (chat: string, text: string) => {
    const response = await stack.post('/v1/messages?wait=60', { chat_id: chat, user_id: 'u1', text });
    expect(response.status, JSON.stringify(response.body)).toBe(200);
    return response.body as { session_id: string; event_id: string; reply: { text: string } };
  };

  /** Chat turns answer with a long text; every fourth one calls the todo tool first. */
  const chatModel = (request: FakeRequest): FakeReply => {
    if (isSummaryRequest(request)) return summariserThatKeeps(request, /codename/i);
    const last = request.messages.at(-1);
    const turn = /turn (\d+)/.exec(request.lastUserText)?.[1] ?? '?';
    if (last?.role === 'user' && Number(turn) % 4 === 0) {
      return { toolCalls: [{ name: 'todo', arguments: { todos: [{ id: turn, content: longText(`todo ${turn}`, 300), status: 'pending' }] } }] };
    }
    return { text: `answer ${turn}: ${longText('reply', 1600)}` };
  };

  it('answers every turn of a chat 2.5 times the window, in a lineage of child sessions, and the model never sees an orphan', async () => {
    fake.handler = chatModel;
    const first = await send('long-1', `turn 1: my ${FACT}. ${longText('intro', 3000)}`);
    expect(first.reply.text).toMatch(/^answer 1: /);
    const sessions = new Set([first.session_id]);
    // The conversation's own size: what a model without compression would have to read at once.
    let chars = first.reply.text.length + 3000;
    for (let turn = 2; chars / 4 < 2.5 * WINDOW; turn++) {
      const text = `turn ${turn}: ${longText(`question ${turn}`, 3000)}`;
      const reply = await send('long-1', text);
      expect(reply.reply.text, `turn ${turn}`).toMatch(new RegExp(`^answer ${turn}: `));
      sessions.add(reply.session_id);
      chars += text.length + reply.reply.text.length;
    }
    // Compressed at least twice: the second compaction no longer protects the head.
    expect(sessions.size).toBeGreaterThanOrEqual(3);
    for (const request of fake.requests) {
      assertNoOrphans(request);
      expect(request.refused ?? false).toBe(false);
    }
    // The fact of the first message survives two compactions, through the summary.
    const last = fake.requests.filter((request) => !isSummaryRequest(request)).at(-1)!;
    expect(JSON.stringify(last.messages)).toContain(FACT);
    expect(last.messages.some((message) => message.content.includes(SUMMARY_PREFIX))).toBe(true);

    const root = (await stack.get(`/v1/sessions/${first.session_id}`)).body;
    expect(root.end_reason).toBe('compression');
    expect(root.child_session_id).toEqual(expect.any(String));
    const lineage = (await stack.get(`/v1/sessions/${first.session_id}/lineage`)).body.sessions;
    expect(lineage.map((entry: any) => entry.session_id)).toEqual(expect.arrayContaining([...sessions]));
    expect(lineage[0].session_id).toBe(first.session_id);
    expect(lineage.slice(1).map((entry: any) => entry.title)).toEqual(lineage.slice(1).map((_: unknown, i: number) => `chat long-1 #${i + 2}`));
    expect(lineage.at(-1).end_reason).toBeNull();
    for (let i = 1; i < lineage.length; i++) expect(lineage[i].parent_session_id).toBe(lineage[i - 1].session_id);
    // Every child has a freshly built prompt of its own, and the chat's route points at the last.
    const tip = (await stack.get(`/v1/sessions/${lineage.at(-1).session_id}`)).body;
    expect(tip.system_prompt).toEqual(expect.any(String));
    expect(tip.parent_session_id).toBe(lineage.at(-2).session_id);
  });

  it('lets the model search the messages of the sessions before the compression', async () => {
    const first = (await send('long-1', 'turn 1000: still there?')).session_id;
    let toolResult = '';
    fake.handler = (request) => {
      const last = request.messages.at(-1);
      // "intro" is only in the raw first message, not in the summaries the children carry, so the
      // root stays among the results however many children the lineage has by now.
      if (last?.role === 'user') return { toolCalls: [{ name: 'session_search', arguments: { query: 'intro', limit: 10 } }] };
      toolResult = last?.content ?? '';
      return { text: 'found it' };
    };
    // The session this turn runs in: a compression just before it would have moved it to a child.
    const current = (await send('long-1', 'what was my codename? search for it')).session_id;
    const found = JSON.parse(toolResult);
    expect(found.success).toBe(true);
    const lineage = (await stack.get(`/v1/sessions/${first}/lineage`)).body.sessions;
    expect(found.results.map((result: any) => result.session_id)).toContain(lineage[0].session_id);
    expect(found.results.map((result: any) => result.session_id)).not.toContain(current);
  });

  it('compresses on /compress with a focus, answers the command, and carries the todo list over', async () => {
    fake.handler = chatModel;
    for (let turn = 1; turn <= 8; turn++) await send('manual', `turn ${turn}: ${longText(`ask ${turn}`, 1500)}`);
    const before = (await send('manual', 'turn 9: short')).session_id;
    const todosBefore = await stack.database.db.selectFrom('session_todos').select('items').where('session_id', '=', before).executeTakeFirstOrThrow();
    const compressed = await send('manual', '/compress the todo items');
    expect(compressed.reply.text).toMatch(/^Compressed: \d+ earlier messages are now a summary \(with extra weight on the todo items\)/);
    expect(compressed.session_id).toBe(before);
    const parent = (await stack.get(`/v1/sessions/${before}`)).body;
    expect(parent.end_reason).toBe('compression');
    const summary = fake.requests.filter(isSummaryRequest).at(-1)!;
    expect(summary.lastUserText).toContain('Give extra weight to: the todo items.');
    const next = await send('manual', 'turn 11: go on');
    expect(next.session_id).toBe(parent.child_session_id);
    expect(next.reply.text).toMatch(/^answer 11: /);
    const todosAfter = await stack.database.db.selectFrom('session_todos').select('items').where('session_id', '=', next.session_id).executeTakeFirstOrThrow();
    expect(todosAfter.items).toEqual(todosBefore.items);
  });

  it('answers /compress with nothing to compact, and refuses it while a question waits for its answer', async () => {
    const fresh = await send('nothing', '/compress');
    expect(fresh.reply.text).toBe('Nothing was compressed: nothing to compact yet.');
    const stored = await stack.database.db.selectFrom('sessions').select(['ineffective_compressions', 'ended_at']).where('id', '=', fresh.session_id).executeTakeFirstOrThrow();
    expect(stored).toEqual({ ineffective_compressions: 0, ended_at: null });
    fake.handler = (request) => (request.messages.at(-1)?.role === 'user' ? { toolCalls: [{ name: 'clarify', arguments: { question: 'Which one?' } }] } : { text: 'thanks' });
    const asked = await stack.post('/v1/messages?wait=30', { chat_id: 'nothing', user_id: 'u1', text: 'pick one for me' });
    expect(asked.body.status).toBe('waiting');
    const refused = await send('nothing', '/compress');
    expect(refused.reply.text).toBe(COMPRESS_WHILE_WAITING_REPLY);
    const waits = (await stack.get(`/v1/sessions/${fresh.session_id}/waits`)).body.waits;
    expect(waits.map((wait: any) => wait.status)).toEqual(['pending']);
  });

  it('retries a call the provider refused as too long once, on the compacted history, instead of answering with an error', async () => {
    fake.handler = chatModel;
    let session = '';
    for (let turn = 1; turn <= 10; turn++) session = (await send('overflow', `turn ${turn}: ${longText(`ask ${turn}`, 1500)}`)).session_id;
    // The provider's real window is smaller than Herald was told: the next prompt is refused.
    fake.contextTokens = fake.requestsFor(session).at(-1)!.promptTokens - 300;
    try {
      const reply = await send('overflow', `turn 11: ${longText('ask 11', 1500)}`);
      expect(reply.reply.text).toMatch(/^answer 11: /);
      expect(fake.requestsFor(session).filter((request) => request.refused)).toHaveLength(1);
      const child = (await stack.get(`/v1/sessions/${session}`)).body.child_session_id;
      // The refused turn went on in the child, on the compacted history, and was answered there.
      expect(fake.requestsFor(child).at(-1)!.lastUserText).toMatch(/^turn 11: /);
      const record = await stack.database.db.selectFrom('session_compressions').selectAll().where('session_id', '=', session).executeTakeFirstOrThrow();
      expect(record).toMatchObject({ trigger: 'overflow', status: 'done', child_session_id: child });
      const turn = await stack.database.db.selectFrom('turns').select(['session_id', 'status']).where('session_id', '=', child).executeTakeFirstOrThrow();
      expect(turn.status).toBe('done');
    } finally {
      fake.contextTokens = WINDOW;
    }
    for (const request of fake.requests) assertNoOrphans(request);
  });

  it('changes nothing when the summariser refuses the credentials, and says so once', async () => {
    fake.handler = (request) => (isSummaryRequest(request) ? { error: { status: 401 } } : chatModel(request));
    const first = await send('auth', `turn 1: ${longText('start', 3000)}`);
    const replies: string[] = [];
    const summaries = () => fake.requests.filter(isSummaryRequest).length;
    const before = summaries();
    for (let turn = 2; summaries() < before + 2; turn++) {
      replies.push((await send('auth', `turn ${turn}: ${longText(`q${turn}`, 2000)}`)).reply.text);
    }
    for (const [i, text] of replies.entries()) expect(text).toMatch(new RegExp(`^answer ${i + 2}: `));
    expect(replies.filter((text) => text.includes('could not reach the summary model'))).toHaveLength(1);
    const session = (await stack.get(`/v1/sessions/${first.session_id}`)).body;
    expect(session).toMatchObject({ end_reason: null, child_session_id: null });
    const record = await stack.database.db.selectFrom('session_compressions').selectAll().where('session_id', '=', first.session_id).executeTakeFirstOrThrow();
    expect(record.status).toBe('unchanged');
    const stored = await stack.database.db.selectFrom('sessions').select('ineffective_compressions').where('id', '=', first.session_id).executeTakeFirstOrThrow();
    expect(stored.ineffective_compressions).toBe(0);
  });
});
