/**
 * The reference pipeline's worker (nothing of Herald): take the BullMQ job, call the model over
 * HTTP, commit the reply and mark the message done in one statement, publish the notice.
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

async function turn(id: string, text: string): Promise<void> {
  const response = await fetch(modelUrl, {
    method: 'POST',
    headers: { 'content-type': 'application/json', authorization: 'Bearer sk-bench' },
    body: JSON.stringify({ model: 'bench', messages: [{ role: 'user', content: text }], prompt_cache_key: `ref-${id}` }),
  });
  if (!response.ok) throw new Error(`model answered ${response.status}`);
  const body = (await response.json()) as { choices: { message: { content: string } }[] };
  const answer = body.choices[0]?.message.content ?? '';
  await pool.query(
    `WITH reply AS (INSERT INTO ref_replies (inbound_id, text) VALUES ($1, $2))
     UPDATE ref_inbound SET status = 'done', completed_at = clock_timestamp() WHERE id = $1`,
    [id, answer],
  );
  await publisher.publish(REPLY_CHANNEL, JSON.stringify({ id, text: answer }));
}

const worker = new Worker<{ id: string; text: string }>(REFERENCE_QUEUE, async (job) => turn(job.data.id, job.data.text), {
  connection: new Redis(env('REDIS_URL'), { maxRetriesPerRequest: null }),
  prefix: env('QUEUE_PREFIX'),
  concurrency,
});
await worker.waitUntilReady();
process.once('SIGTERM', () => {
  void worker.close().then(() => process.exit(0));
});
console.log('reference worker started');
