import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI } from './support/fake-llm.ts';
import type { FakeLLM, FakeReply, FakeRequest } from './support/fake-llm.ts';
import { heraldOnTerminal } from './support/pty.ts';
import type { Terminal } from './support/pty.ts';
import { PROCESS_START_MS, startStack, TEST_TOKEN } from './support/stack.ts';
import type { Stack } from './support/stack.ts';

const LONG = Array.from({ length: 40 }, (_, i) => `word${i}`).join(' ');
const SLOW = Array.from({ length: 30 }, (_, i) => `slow${i}`).join(' ');

/** The model: a tool per message, then a report of what the tools answered. */
function model(request: FakeRequest): FakeReply {
  const last = request.messages.at(-1);
  if (last?.role === 'tool') return { text: `results: ${last.content ?? ''}` };
  const text = request.lastUserText;
  if (text === 'pay rent') return { toolCalls: [{ name: 'wire_transfer', arguments: { label: 'rent', amount: 900 } }] };
  if (text === 'clean up') return { toolCalls: [{ name: 'terminal', arguments: { command: 'mkdir -p scratch && rm -rf scratch && echo cleaned' } }] };
  if (text === 'plan a trip') return { toolCalls: [{ name: 'clarify', arguments: { question: 'Where to?', choices: ['Paris', 'Rome'] } }] };
  if (text === 'pay the plumber') return { toolCalls: [{ name: 'wire_transfer', arguments: { label: 'plumber', amount: 250 } }] };
  if (text === 'look a while') return { toolCalls: [{ name: 'slow_lookup', arguments: { label: 'a while', sleep_ms: 4000 } }] };
  if (text === 'look slowly') return { toolCalls: [{ name: 'slow_lookup', arguments: { label: 'slow', sleep_ms: 60_000 } }] };
  if (text === 'say a lot') return { text: LONG };
  if (text === 'write slowly') return { text: SLOW, chunkDelayMs: 100 };
  return { text: `plain: ${text}` };
}

describe('herald chat in a terminal', { timeout: 4 * PROCESS_START_MS }, () => {
  let fake: FakeLLM;
  let stack: Stack;
  let chat: Terminal;
  const mark = () => chat.screen().length;

  beforeAll(async () => {
    fake = await startFakeOpenAI({ handler: model });
    stack = await startStack({ model: fake, testTools: true });
    chat = heraldOnTerminal(['chat'], { HERALD_URL: stack.url, HERALD_API_TOKEN: TEST_TOKEN, USER: 'ada' }, { columns: 60 });
    await chat.until('you> ', { timeoutMs: PROCESS_START_MS });
  });
  afterAll(async () => {
    chat.child.kill('SIGKILL');
    await stack.stop();
  });

  it('shows tool calls as they run and the answer after /approve, /deny and a clarify answer (3 of 3)', async () => {
    let from = mark();
    chat.type('pay rent\r');
    await chat.until('⚙ wire_transfer', { from });
    await chat.until('Approval needed for wire_transfer', { from });
    from = mark();
    chat.type('/approve\r');
    await chat.until('herald> Approved: transfer 900 (rent).', { from });
    await chat.until('herald> results: transferred 900 for rent', { from });

    from = mark();
    chat.type('clean up\r');
    await chat.until('Approval needed for terminal', { from });
    from = mark();
    chat.type('/deny not now\r');
    await chat.until('(recursive delete).', { from });
    expect(chat.screen().slice(from)).not.toContain('..');
    await chat.until(/herald> results: BLOCKED: the person denied/, { from });

    from = mark();
    chat.type('plan a trip\r');
    await chat.until('Choices: 1) Paris 2) Rome', { from });
    from = mark();
    chat.type('Rome\r');
    await chat.until(/herald> results: .*Rome/, { from });
  });

  it('takes input while a turn runs: /stop interrupts it', async () => {
    let from = mark();
    chat.type('look slowly\r');
    await chat.until('⚙ slow_lookup', { from });
    from = mark();
    chat.type('/stop\r');
    await chat.until('herald> Stopping the running turn.', { from });
    from = mark();
    chat.type('still here?\r');
    await chat.until('herald> plain: still here?', { from });
  });

  it('Ctrl-C during a turn stops that turn and returns to the prompt', async () => {
    let from = mark();
    chat.type('look slowly\r');
    await chat.until('⚙ slow_lookup', { from });
    from = mark();
    chat.type('\x03');
    await chat.until('stopping the turn (Ctrl-C again quits)', { from });
    await chat.until('herald> Stopping the running turn.', { from });
    from = mark();
    chat.type('after ctrl-c\r');
    await chat.until('herald> plain: after ctrl-c', { from });
    expect(chat.child.exitCode).toBeNull();
  });

  it('wraps text to the terminal, continuation lines under the first', async () => {
    const from = mark();
    chat.type('say a lot\r');
    await chat.until('word39', { from });
    // The prompt is redrawn under each answer; on the screen an answer overwrites it (the line is cleared first).
    const lines = chat
      .screen()
      .slice(from)
      .split('\n')
      .map((line) => line.replace(/^(you> )+/, ''))
      .filter((line) => /word\d/.test(line));
    expect(lines.length).toBeGreaterThan(3);
    for (const line of lines) expect(line.length, line).toBeLessThanOrEqual(60);
    expect(lines[0]).toMatch(/^herald> word0/);
    expect(lines[1]).toMatch(/^ {8}word/);
  });

  it('prints the reply as it is written, before the turn ends', async () => {
    const from = mark();
    chat.type('write slowly\r');
    await chat.until('herald> slow0 slow1', { from });
    // The words are on the screen while the turn still runs: streamed, not printed at the end.
    const event = await stack.database.db.selectFrom('inbound_events').select('status').where('text', '=', 'write slowly').executeTakeFirstOrThrow();
    expect(event.status).not.toBe('done');
    expect(chat.screen().slice(from)).not.toContain('slow29');
    await chat.until('slow29', { from });
    const text = chat
      .screen()
      .slice(from)
      .split('\n')
      .map((line) => line.replace(/^(you> )+/, ''))
      .filter((line) => /slow\d/.test(line))
      .map((line) => line.replace(/^herald> /, '').trim())
      .join(' ');
    // Printed once: the polling does not print the reply again after the stream did.
    expect(text).toBe(SLOW);
  });

  it('a plain message typed while a turn runs is queued (followup) and answered after that turn', async () => {
    let from = mark();
    chat.type('look a while\r');
    await chat.until('⚙ slow_lookup', { from });
    from = mark();
    chat.type('meanwhile\r');
    // The running turn answers after the message was typed, then the message gets its own turn.
    await chat.until('herald> plain: meanwhile', { from, timeoutMs: 30_000 });
    const after = chat.screen().slice(from);
    expect(after).toContain('herald> results: found a while');
    expect(after.indexOf('herald> results: found a while')).toBeLessThan(after.indexOf('herald> plain: meanwhile'));
    expect(after).not.toContain('Stopping');
    // Sent while the turn ran (not held back until it ended), and given a turn of its own.
    const events = await stack.database.db.selectFrom('inbound_events').select(['text', 'received_at', 'completed_at', 'turn_id']).where('text', 'in', ['look a while', 'meanwhile']).execute();
    const running = events.find((event) => event.text === 'look a while')!;
    const queued = events.find((event) => event.text === 'meanwhile')!;
    expect(new Date(queued.received_at).getTime()).toBeLessThan(new Date(running.completed_at!).getTime());
    expect(queued.turn_id).not.toBe(running.turn_id);
  });

  it('a plain `yes` answers an approval, and the answer after it is shown', async () => {
    let from = mark();
    chat.type('pay the plumber\r');
    await chat.until('Approval needed for wire_transfer', { from });
    from = mark();
    chat.type('yes\r');
    await chat.until('herald> Approved: transfer 250 (plumber).', { from });
    await chat.until('herald> results: transferred 250 for plumber', { from });
  });

  it('Ctrl-C with no turn running quits', async () => {
    chat.type('\x03');
    expect(await chat.exited).toBe(0);
  });

  it('a second Ctrl-C during a turn quits', async () => {
    const again = heraldOnTerminal(['chat'], { HERALD_URL: stack.url, HERALD_API_TOKEN: TEST_TOKEN }, { columns: 60 });
    try {
      await again.until('you> ', { timeoutMs: PROCESS_START_MS });
      let from = again.screen().length;
      again.type('look slowly\r');
      // A chat just started shows its first turn's tool calls too, however quickly the model calls one.
      await again.until('⚙ slow_lookup', { from });
      from = again.screen().length;
      again.type('\x03');
      await again.until('stopping the turn (Ctrl-C again quits)', { from });
      again.type('\x03');
      const quit = await Promise.race([again.exited, new Promise((resolve) => setTimeout(() => resolve('still running after 20 s'), 20_000))]);
      expect(quit, again.screen().slice(-600)).toBe(0);
    } finally {
      again.child.kill('SIGKILL');
    }
  });
});
