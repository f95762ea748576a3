/**
 * The reference pipeline's worker (nothing of Herald): take the BullMQ job, call the model over
 * HTTP (again after each tool step, see toolStep), commit the reply and mark the message done in one statement, publish the notice.
 */
import pg from 'pg';
import { Worker } from 'bullmq';
import { Redis } from 'ioredis';
import { REFERENCE_QUEUE, REPLY_CHANNEL } from './schema.ts';

const env = (name: string) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
};

const concurrency = Number(env('WORKER_CONCURRENCY'));
const pool = new pg.Pool({ connectionString: env('DATABASE_URL'), max: Math.min(concurrency, 16) });
const publisher = new Redis(env('REDIS_URL'));
const modelUrl = `${env('OPENAI_BASE_URL')}/chat/completions`;

interface ModelMessage {
  role: string;
  content: string | null;
  tool_calls?: { id: string; type: 'function'; function: { name: string; arguments: string } }[];
  tool_call_id?: string;
}

async function callModel(id: string, messages: ModelMessage[]): Promise<ModelMessage> {
  const response = await fetch(modelUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-bench' },
    body: JSON.stringify({ model: 'bench', messages, prompt_cache_key: `ref-${id}` }),
  });
  if (!response.ok) throw new Error(`model answered ${response.status}`);
  const body = (await response.json()) as { choices: { message: ModelMessage }[] };
  const message = body.choices[0]?.message;
  if (!message) throw new Error('model answered no choice');
  return message;
}

/**
 * A tool step in the plainest durable way (issue 41 point 5): the tool's write (the chat's task
 * list, merged like `todo`) and the step's call and result, in one statement.
 */
async function toolStep(id: string, chatId: string, call: NonNullable<ModelMessage['tool_calls']>[number]): Promise<string> {
  const args = JSON.parse(call.function.arguments) as { todos?: unknown[] };
  const { rows } = await pool.query<{ result: string }>(
    `WITH todo AS (
       INSERT INTO ref_todos (chat_id, items, revision) VALUES ($2, $3::jsonb, 1)
       ON CONFLICT (chat_id) DO UPDATE SET items = ref_todos.items || excluded.items, revision = ref_todos.revision + 1
       RETURNING items::text || ' r' || revision AS result),
     step AS (INSERT INTO ref_steps (inbound_id, tool_calls, result) SELECT $1, $4::jsonb, result FROM todo)
     SELECT result FROM todo`,
    [id, chatId, JSON.stringify(args.todos ?? []), JSON.stringify([call])],
  );
  return rows[0]?.result ?? '';
}

async function turn(id: string, text: string, chatId: string): Promise<void> {
  const messages: ModelMessage[] = [{ role: 'user', content: text }];
  let message = await callModel(id, messages);
  // Steps until the model answers without a tool call, as an agent loop runs.
  while (message.tool_calls && message.tool_calls.length > 0) {
    messages.push(message);
    for (const call of message.tool_calls) messages.push({ role: 'tool', tool_call_id: call.id, content: await toolStep(id, chatId, call) });
    message = await callModel(id, messages);
  }
  const answer = message.content ?? '';
  await pool.query(
    `WITH reply AS (INSERT INTO ref_replies (inbound_id, text) VALUES ($1, $2))
     UPDATE ref_inbound SET status = 'done', completed_at = clock_timestamp() WHERE id = $1`,
    [id, answer],
  );
  await publisher.publish(REPLY_CHANNEL, JSON.stringify({ id, text: answer }));
}

const worker = new Worker<{ id: string; text: string; chatId: string }>(REFERENCE_QUEUE, async (job) => turn(job.data.id, job.data.text, job.data.chatId), {
  connection: new Redis(env('REDIS_URL'), { maxRetriesPerRequest: null }),
  prefix: env('QUEUE_PREFIX'),
  concurrency,
});
await worker.waitUntilReady();
process.once('SIGTERM', () => {
  void worker.close().then(() => process.exit(0));
});
console.log('reference worker started');
