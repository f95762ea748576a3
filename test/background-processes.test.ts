import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { running } from '../libs/tools/test/host-processes.ts';
import { startFakeOpenAI } from './support/fake-llm.ts';
import type { FakeLLM, FakeRequest } from './support/fake-llm.ts';
import { PROCESS_START_MS, startStack, stopProcess, waitFor } from './support/stack.ts';
import type { Stack } from './support/stack.ts';

/**
 * Background processes outlive the turn that started them but never their worker: an exit with
 * notify_on_exit is a new turn carrying the exit code and the output's tail; a worker stopped
 * with SIGTERM ends its processes and tells each session once.
 */
describe('the process tool across turns and workers', () => {
  let fake: FakeLLM;
  let stack: Stack;
  beforeAll(async () => {
    fake = await startFakeOpenAI();
    fake.handler = (request: FakeRequest) => {
      const last = request.messages[request.messages.length - 1];
      if (last?.role === 'tool') return { text: 'started it' };
      if (request.lastUserText === 'build it') {
        return { toolCalls: [{ name: 'process', arguments: { action: 'start', command: 'sleep 0.5; echo BUILD-OK-42; exit 7', notify_on_exit: true } }] };
      }
      if (request.lastUserText === 'run the watcher') {
        return { toolCalls: [{ name: 'process', arguments: { action: 'start', command: 'while true; do echo tick; sleep 0.271; done' } }] };
      }
      return { text: `noted: ${request.lastUserText.slice(0, 40)}` };
    };
    stack = await startStack({ model: fake, workers: 0, workerProcesses: true });
  });
  afterAll(() => stack.stop());

  const userTexts = (sessionId: string) => fake.requestsFor(sessionId).map((request) => request.lastUserText);

  it(
    'starts a new turn with the exit code and tail when a notify_on_exit process ends',
    async () => {
      await stack.startProcess('worker');
      const posted = await stack.post('/v1/messages?wait=30', { chat_id: 'proc-build', user_id: 'ada', text: 'build it' });
      expect(posted.body.reply.text).toBe('started it');
      const sessionId = posted.body.session_id as string;
      await waitFor(async () => userTexts(sessionId).some((text) => text.includes('BUILD-OK-42')), { timeoutMs: 20_000 });
      const notice = userTexts(sessionId).find((text) => text.includes('BUILD-OK-42'))!;
      expect(notice).toMatch(/^\[Background process proc_[0-9a-f]+ finished \(exit code 7\)\.\nCommand: sleep 0\.5; echo BUILD-OK-42; exit 7\nOutput \(the end\):\nBUILD-OK-42\]$/);
    },
    PROCESS_START_MS + 60_000,
  );

  it(
    'ends the processes of a worker stopped with SIGTERM and tells the session once',
    async () => {
      for (const worker of stack.processes()) await stopProcess(worker, 'SIGTERM');
      const worker = await stack.startProcess('worker');
      const posted = await stack.post('/v1/messages?wait=30', { chat_id: 'proc-watch', user_id: 'ada', text: 'run the watcher' });
      expect(posted.body.reply.text).toBe('started it');
      const sessionId = posted.body.session_id as string;
      await waitFor(async () => running('sleep 0.271').length > 0, { timeoutMs: 10_000 });
      // The process outlived its turn.
      expect(running('sleep 0.271').length).toBeGreaterThan(0);
      expect(await stopProcess(worker, 'SIGTERM')).toBe(0);
      expect(running('sleep 0.271')).toEqual([]);
      const notices = await stack.database.db.selectFrom('inbound_events').select(['text', 'user_id']).where('session_id', '=', sessionId).where('user_name', '=', 'process').execute();
      expect(notices).toHaveLength(1);
      expect(notices[0]!.user_id).toBe('api:ada');
      expect(notices[0]!.text).toMatch(/^\[The worker running this session's background processes stopped, so they were ended: proc_[0-9a-f]+ \(while true; do echo tick; sleep 0\.271; done\)\./);
      // The next worker answers it in a turn of its own.
      await stack.startProcess('worker');
      await waitFor(async () => userTexts(sessionId).some((text) => text.startsWith('[The worker running')), { timeoutMs: 30_000 });
    },
    PROCESS_START_MS * 2 + 60_000,
  );
});
