/**
 * The reference pipeline's HTTP front (nothing of Herald): commit the inbound message, enqueue a
 * BullMQ job, wait for the worker's notice on Redis, answer. The lower bound of the same durable
 * steps Herald's ingress takes, on the same Postgres, Redis, BullMQ and fastify.
 */
import Fastify from 'fastify';
import pg from 'pg';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { REFERENCE_QUEUE, REPLY_CHANNEL } from './schema.ts';

const env = (name: string) => {
  const value = process.env[name];
  if (!value) throw new Error(`${name} is required`);
  return value;
};

const pool = new pg.Pool({ connectionString: env('DATABASE_URL'), max: 16 });
const queue = new Queue(REFERENCE_QUEUE, { connection: new Redis(env('REDIS_URL'), { maxRetriesPerRequest: null }), prefix: env('QUEUE_PREFIX') });
const subscriber = new Redis(env('REDIS_URL'));
const waiters = new Map<string, (text: string) => void>();

await subscriber.subscribe(REPLY_CHANNEL);
subscriber.on('message', (_channel: string, message: string) => {
  const { id, text } = JSON.parse(message) as { id: string; text: string };
  waiters.get(id)?.(text);
});

const app = Fastify();
app.post<{ Body: { chat_id: string; user_id: string; text: string }; Querystring: { wait?: string } }>('/v1/messages', async (request, reply) => {
  const { chat_id: chatId, user_id: userId, text } = request.body;
  const inserted = await pool.query<{ id: string }>('INSERT INTO ref_inbound (chat_id, user_id, text) VALUES ($1, $2, $3) RETURNING id', [chatId, userId, text]);
  const id = inserted.rows[0]?.id ?? '';
  const answered = new Promise<string | undefined>((resolve) => {
    const timer = setTimeout(() => resolve(undefined), Number(request.query.wait ?? 30) * 1000);
    waiters.set(id, (answer) => {
      clearTimeout(timer);
      resolve(answer);
    });
  });
  await queue.add('turn', { id, text, chatId }, { jobId: `m${id}`, removeOnComplete: true, removeOnFail: true });
  const answer = await answered;
  waiters.delete(id);
  return answer === undefined ? reply.code(202).send({ event_id: id }) : { event_id: id, reply: { text: answer } };
});

await app.listen({ port: Number(env('PORT')), host: '127.0.0.1' });
console.log('reference ingress listening');
