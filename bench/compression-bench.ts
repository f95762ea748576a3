import { startFakeOpenAI } from '../test/support/fake-llm.ts';
import type { FakeRequest } from '../test/support/fake-llm.ts';
import { startStack } from '../test/support/stack.ts';
import { isSummaryRequest, longText, summariserThatKeeps } from '../test/support/long-chat.ts';

export interface CompressionRun {
  variant: string;
  turns: number;
  /** Prompt tokens of each chat turn's model call(s), as the fake provider counted them. */
  inputTokens: number[];
  /** Prompt tokens of each turn's first model call, by turn (index 0 is turn 1). */
  perTurn: number[];
  compressions: number;
  /** Wall time of each compression (claim to commit) and of its summariser call, in ms. */
  compressionMs: number[];
  summaryMs: number[];
}

/** The window the compressing variant is told; the other is told a window it never reaches. */
export const BENCH_WINDOW = 32_000;

/**
 * One chat of `turns` turns (a 1,000-character question and an 1,800-character answer each, a tool
 * call every fifth turn) through the real ingress and a worker, against the fake OpenAI server.
 * With compression the model's window is BENCH_WINDOW; without, the window is unlimited and every
 * turn sends the whole transcript.
 */
export async function runCompressionBench(compress: boolean, turns: number): Promise<CompressionRun> {
  const fake = await startFakeOpenAI(compress ? { contextTokens: BENCH_WINDOW } : {});
  const stack = await startStack({ model: fake, env: { HERALD_CONTEXT_TOKENS: String(compress ? BENCH_WINDOW : 100_000_000) } });
  try {
    fake.handler = (request: FakeRequest) => {
      if (isSummaryRequest(request)) return summariserThatKeeps(request, /decision/i);
      const last = request.messages.at(-1);
      const turn = Number(/turn (\d+)/.exec(request.lastUserText)?.[1] ?? 0);
      if (last?.role === 'user' && turn % 5 === 0) return { toolCalls: [{ name: 'todo', arguments: { todos: [{ id: String(turn), content: `step ${turn}`, status: 'pending' }] } }] };
      return { text: `answer ${turn}: ${longText(`a${turn}`, 1800)}` };
    };
    for (let turn = 1; turn <= turns; turn++) {
      const response = await stack.post('/v1/messages?wait=120', { chat_id: 'bench', user_id: 'u1', text: `turn ${turn}: decision ${turn}. ${longText(`q${turn}`, 1000)}` });
      // On a loaded machine the late turns of the uncompressed chat (150K-token prompts) can outlast
      // the wait: follow the event instead of calling the turn lost.
      const body = response.status === 202 ? await stack.waitForEvent(response.body.event_id, 600_000) : response.body;
      if (!String(body.reply?.text).startsWith(`answer ${turn}`)) {
        throw new Error(`turn ${turn} was not answered: ${JSON.stringify(response.body).slice(0, 300)}`);
      }
    }
    const chat = fake.requests.filter((request) => !isSummaryRequest(request));
    const summaries = fake.requests.filter(isSummaryRequest);
    const rows = await stack.database.db.selectFrom('session_compressions').select(['started_at', 'finished_at']).where('status', '=', 'done').execute();
    return {
      variant: compress ? `compression at ${BENCH_WINDOW.toLocaleString('en')}-token window` : 'no compression',
      turns,
      inputTokens: chat.map((request) => request.promptTokens),
      perTurn: firstCallPerTurn(chat, turns),
      compressions: rows.length,
      compressionMs: rows.map((row) => (row.finished_at ? row.finished_at.getTime() - row.started_at.getTime() : Number.NaN)),
      summaryMs: summaries.map((request) => request.serviceMs ?? Number.NaN),
    };
  } finally {
    await stack.stop();
  }
}

/** The prompt of each turn's first model call (a tool-calling turn makes two; the first shows the history it starts from). */
function firstCallPerTurn(requests: FakeRequest[], turns: number): number[] {
  const perTurn = new Array<number>(turns).fill(Number.NaN);
  for (const request of requests) {
    const turn = Number(/^turn (\d+):/.exec(request.lastUserText)?.[1] ?? 0);
    if (turn >= 1 && turn <= turns && Number.isNaN(perTurn[turn - 1])) perTurn[turn - 1] = request.promptTokens;
  }
  return perTurn;
}
