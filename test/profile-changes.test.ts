import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import { startFakeOpenAI } from './support/fake-llm.ts';
import type { FakeLLM, FakeRequest, FakeReply } from './support/fake-llm.ts';
import { startStack, waitFor } from './support/stack.ts';
import type { Stack } from './support/stack.ts';

// Each process caches profiles' stored hooks and reset rules (libs/db/src/profile-cache.ts); these
// tests change them from elsewhere and check that the next message or turn follows the change.

/** A pre_tool_call hook that always fails, closed: every tool call of the profile is blocked. */
const BLOCK_ALL = { name: 'block-all', event: 'pre_tool_call', command: ['false'], on_error: 'closed' };

/** Looks a label up with slow_lookup, then reports the tool's result. */
function lookupThenReport(request: FakeRequest): FakeReply {
  const last = request.messages[request.messages.length - 1];
  if (last?.role === 'tool') return { text: `result: ${last.content}` };
  return { toolCalls: [{ name: 'slow_lookup', arguments: { label: request.lastUserText } }] };
}

describe('a profile change made elsewhere', () => {
  let fake: FakeLLM;
  let stack: Stack;
  const send = (chatId: string, text: string) => stack.post('/v1/messages?wait=30', { chat_id: chatId, user_id: 'u1', text });
  beforeAll(async () => {
    fake = await startFakeOpenAI();
    stack = await startStack({
      model: fake,
      workerProcesses: true,
      testTools: true,
      env: { HERALD_SESSION_RESET: JSON.stringify([{ platform: 'telegram', mode: 'idle', idle_minutes: 5 }]) },
    });
    await stack.startProcess('worker');
  });
  afterAll(async () => {
    await stack?.stop();
  });

  it('reaches a worker process on its next turn: hooks set and cleared through the API', async () => {
    fake.handler = lookupThenReport;
    expect((await send('hooks', 'k1')).body.reply.text).toBe('result: found k1');
    expect((await stack.put('/v1/profiles/main/hooks', { hooks: [BLOCK_ALL] })).status).toBe(200);
    // The worker process read the profile's hooks for the first turn and keeps them: only the
    // notice of the change can make it fire the new hook now.
    expect((await send('hooks', 'k2')).body.reply.text).toMatch(/^result: BLOCKED by the policy hook 'block-all'/);
    expect((await stack.put('/v1/profiles/main/hooks', { hooks: [] })).status).toBe(200);
    expect((await send('hooks', 'k3')).body.reply.text).toBe('result: found k3');
  });

  it('a reset rule written to the profile by another connection applies to the next message', async () => {
    fake.handler = (request) => ({ text: `echo: ${request.lastUserText}` });
    const sessions = () => stack.database.db.selectFrom('sessions').select(['id', 'end_reason']).where('chat_id', '=', 'resets').orderBy('created_at').execute();
    await send('resets', 'first');
    const [first] = await sessions();
    // The ingress holds the profile's (empty) rules; HERALD_SESSION_RESET has none for the API.
    expect(stack.profiles.cached('main')?.sessionReset).toEqual([]);
    await sql`UPDATE messages SET created_at = created_at - interval '1 hour' WHERE session_id = ${first!.id}::uuid`.execute(stack.database.db);
    await sql`UPDATE sessions SET created_at = created_at - interval '1 hour' WHERE id = ${first!.id}::uuid`.execute(stack.database.db);
    await send('resets', 'an hour later, no rule');
    expect(await sessions()).toHaveLength(1);
    await sql`UPDATE profiles SET session_reset = ${JSON.stringify([{ platform: 'api', mode: 'idle', idle_minutes: 30 }])}::jsonb WHERE id = 'main'`.execute(stack.database.db);
    // The notice is asynchronous to the writer's commit: the ingress drops its copy when it arrives.
    await waitFor(async () => stack.profiles.cached('main') === undefined, { what: 'the ingress to hear of the change' });
    await sql`UPDATE messages SET created_at = created_at - interval '1 hour' WHERE session_id = ${first!.id}::uuid`.execute(stack.database.db);
    expect((await send('resets', 'another hour later')).body.reply.text).toBe('echo: another hour later');
    expect((await sessions()).map((session) => session.end_reason)).toEqual(['reset', null]);
  });
});
