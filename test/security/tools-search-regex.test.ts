import { monitorEventLoopDelay } from 'node:perf_hooks';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SEARCH_TIME_BUDGET_MS } from '../../libs/tools/src/files/file-search.ts';
import { startFakeOpenAI } from '../support/fake-llm.ts';
import type { FakeLLM, FakeReply, FakeRequest } from '../support/fake-llm.ts';
import { startStack, waitFor } from '../support/stack.ts';
import type { Stack } from '../support/stack.ts';

/*
 * Issue 17, point 7: a catastrophic regular expression in search_files ((a+)+$ on a long run of
 * a's ending in b) used to block the worker's event loop for the whole 10 s budget, as long as a
 * lease, stalling every other session on that worker. It now runs on a worker thread that is
 * terminated at the budget. Shown on one worker process (in this test's process) holding two
 * sessions: the bystander is answered within a second while the regex runs, the searching
 * session's lease keeps being renewed, and the search ends with a clear "took too long".
 */

const CATASTROPHIC = '(a+)+$';

function model(request: FakeRequest): FakeReply {
  if (request.lastUserText === 'hello') return { text: 'hi, bystander' };
  const results = request.messages.filter((message) => message.role === 'tool');
  if (results.length === 0) return { toolCalls: [{ name: 'write_file', arguments: { path: 'redos.txt', content: `${'a'.repeat(64)}b\n` } }] };
  if (results.length === 1) return { toolCalls: [{ name: 'search_files', arguments: { pattern: CATASTROPHIC, path: 'redos.txt' } }] };
  return { text: `search said: ${results[1]!.content}` };
}

describe('a catastrophic regex in search_files', () => {
  let fake: FakeLLM;
  let stack: Stack;
  beforeAll(async () => {
    fake = await startFakeOpenAI();
    fake.handler = model;
    // One in-process worker: both sessions share its event loop. Leases last 3 s (the stack's setting).
    stack = await startStack({ env: { HERALD_MODEL: 'openai/gpt-test', OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: 'sk-test' } });
  });
  afterAll(async () => {
    await stack.stop();
    await fake.close();
  });

  const roles = async (sessionId: string): Promise<string[]> => (await stack.get(`/v1/sessions/${sessionId}/messages`)).body.messages.map((message: any) => message.role);
  const lease = async (sessionId: string) =>
    (
      await sql<{ token: string; live: boolean; expires_at: Date }>`
      SELECT token::text, expires_at > now() AS live, expires_at FROM session_leases WHERE session_id = ${sessionId}`.execute(stack.database.db)
    ).rows[0];

  it('leaves the worker answering others and its lease renewed, and ends with "took too long"', async () => {
    const slow = await stack.post('/v1/messages', { chat_id: 'redos', user_id: 'u1', text: 'find the pattern' });
    expect(slow.status).toBe(202);
    const sessionId = slow.body.session_id as string;
    // The search_files call is stored before it runs, its result after: in between, the regex runs.
    await waitFor(async () => (await roles(sessionId)).join(',') === 'user,assistant,tool,assistant', { timeoutMs: 30_000, what: 'search running' });
    const delay = monitorEventLoopDelay({ resolution: 20 });
    delay.enable();
    const startedAt = performance.now();

    const asked = performance.now();
    const bystander = await stack.post('/v1/messages?wait=20', { chat_id: 'bystander', user_id: 'u2', text: 'hello' });
    const answeredMs = performance.now() - asked;
    expect(bystander.status).toBe(200);
    expect(bystander.body.reply.text).toBe('hi, bystander');
    // Answered while the search was still running: its result is not stored yet.
    expect(await roles(sessionId)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    expect(answeredMs).toBeLessThan(1000);

    // The lease stays live and keeps moving forward for longer than one lease lasts.
    const samples: { token: string; live: boolean; expires_at: Date }[] = [];
    await waitFor(
      async () => {
        if ((await roles(sessionId)).length > 4) return true;
        const now = await lease(sessionId);
        // Kept only if the search was still running after the sample: a finished turn releases its lease.
        if (now && (await roles(sessionId)).length === 4) samples.push(now);
        return false;
      },
      { timeoutMs: SEARCH_TIME_BUDGET_MS + 30_000, intervalMs: 250, what: 'the search to end' },
    );
    delay.disable();
    const searchedMs = performance.now() - startedAt;
    expect(searchedMs).toBeGreaterThan(3000);
    expect(samples.length).toBeGreaterThan(5);
    expect(samples.every((sample) => sample.live)).toBe(true);
    expect(new Set(samples.map((sample) => sample.token)).size).toBe(1);
    const expiries = samples.map((sample) => sample.expires_at.getTime());
    expect(Math.max(...expiries) - Math.min(...expiries)).toBeGreaterThan(2000);
    // Nothing on this process waited a second for the loop while the regex ran.
    expect(delay.max / 1e6).toBeLessThan(1000);

    const event = await stack.waitForEvent(slow.body.event_id, 30_000);
    expect(event.reply.text).toMatch(
      /^search said: No matches for \/\(a\+\)\+\$\/ under redos\.txt\.\n\[stopped: the search took too long \(over 10 s\) and was cut off; simplify the pattern or narrow the path\]$/,
    );
  }, 120_000);
});
