import type { FastifyInstance } from 'fastify';
import { pingDb } from '@herald/db';
import type { Db } from '@herald/db';
import type { NoticeBus } from '@herald/queue';
import { metricsText } from '@herald/telemetry';
import { healthView, metricsExposition, readinessView } from './contracts/health-views.ts';
import { withContract } from './contracts/route-contract.ts';

async function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      promise,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

/** 'ok', or why the check failed: readiness names the broken dependency instead of throwing. */
function outcome(check: Promise<unknown>): Promise<string> {
  return check.then(
    () => 'ok',
    (error: Error) => error.message,
  );
}

/** Liveness, readiness and the Prometheus scrape: the routes a supervisor and a scraper call. */
export function registerHealthRoutes(app: FastifyInstance, deps: { db: Db; notices: NoticeBus }): void {
  app.get('/healthz', withContract({ summary: 'Liveness', tags: ['health'], response: { 200: healthView } }), async () => ({ status: 'ok' }));

  // Prometheus scrapes without the API token, as it does /healthz: route only /v1 and the platform
  // webhooks to the internet (docs/operations.md).
  app.get('/metrics', withContract({ summary: 'The Prometheus scrape', tags: ['health'], produces: 'text/plain', response: { 200: metricsExposition } }), async (_request, reply) => {
    const { contentType, text } = await metricsText();
    return reply.header('content-type', contentType).send(text);
  });

  app.get('/readyz', withContract({ summary: 'Readiness: Postgres and the queue store', tags: ['health'], response: { 200: readinessView, 503: readinessView } }), async (_request, reply) => {
    const [postgres, queueStore] = await Promise.all([outcome(withTimeout(pingDb(deps.db), 2000)), outcome(deps.notices.ping(2000))]);
    const ready = postgres === 'ok' && queueStore === 'ok';
    // The queue's store answers under its own name: `redis`, or `queue` when it is Postgres too.
    const store = deps.notices.store === 'redis' ? 'redis' : 'queue';
    return reply.code(ready ? 200 : 503).send({ status: ready ? 'ready' : 'not_ready', postgres, [store]: queueStore });
  });
}
