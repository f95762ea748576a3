import type { FastifyInstance } from 'fastify';
import { sql } from 'kysely';
import { z } from 'zod';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { FastifyAdapter } from '@bull-board/fastify';
import type { Config } from '@herald/core';
import type { Db } from '@herald/db';
import { bullmqDepth } from '@herald/queue';
import type { NoticeBus, RunQueue } from '@herald/queue';
import { inboxDepth } from '@herald/session';
import { sendError } from './api-errors.ts';
import { authorizedForAdmin } from './api-auth.ts';
import { firstIssue } from './message-body.ts';

export interface AdminDependencies {
  config: Config;
  db: Db;
  notices: NoticeBus;
  /** The BullMQ queues the board shows (runs, reviews). */
  queues: readonly RunQueue[];
}

export const BOARD_PATH = '/admin/queues';
const ROLES = ['ingress', 'worker', 'reviewer', 'scheduler'] as const;

// The Postgres-side queues, each a table with a status column and its own open states.
const POSTGRES_QUEUES = {
  inbox: { table: 'inbound_events', columns: 'id, session_id, platform, status, received_at AS created_at, error AS last_error', order: 'received_at' },
  outbox: { table: 'outbox', columns: 'id, session_id, platform, status, attempts, next_attempt_at, created_at, last_error', order: 'created_at' },
  reviews: { table: 'reviews', columns: 'id, session_id, status, attempts, next_attempt_at, created_at, error AS last_error', order: 'created_at' },
  cron_runs: { table: 'cron_runs', columns: 'id, job_id, session_id, status, created_at, error AS last_error', order: 'created_at' },
} as const;

const jobsQuery = z.object({
  queue: z.enum(Object.keys(POSTGRES_QUEUES) as [keyof typeof POSTGRES_QUEUES], { error: `expected one of ${Object.keys(POSTGRES_QUEUES).join(', ')}` }),
  status: z.string().regex(/^[a-z_]{1,20}$/, { error: 'expected a status name' }).optional(),
  limit: z.coerce.number().int().min(1).max(500).default(50),
});

/** What `herald status` shows: live processes per role, queue depths, the oldest waiting turn, dead letters. */
async function clusterStatus(deps: AdminDependencies): Promise<Record<string, unknown>> {
  const [alive, inbox, queues, dead] = await Promise.all([
    deps.notices.aliveRoles(deps.config.queuePrefix),
    inboxDepth(deps.db),
    Promise.all(deps.queues.map((queue) => bullmqDepth(queue))),
    sql<{ deliveries: string; reviews: string; cron_jobs: string }>`
      SELECT (SELECT count(*) FROM outbox WHERE status = 'failed') AS deliveries,
             (SELECT count(*) FROM reviews WHERE status = 'failed') AS reviews,
             (SELECT count(*) FROM cron_jobs WHERE NOT enabled AND paused_reason IS NOT NULL) AS cron_jobs`.execute(deps.db),
  ]);
  const { oldestEventId, oldestSessionId, ...inboxQueue } = inbox;
  const row = dead.rows[0];
  return {
    roles: Object.fromEntries(ROLES.map((role) => [role, alive[role] ?? 0])),
    queues: [inboxQueue, ...queues].map(({ oldestWaitingSeconds, ...counts }) => ({ ...counts, oldest_waiting_seconds: Math.round(oldestWaitingSeconds * 10) / 10 })),
    oldest_waiting_turn:
      oldestEventId === null ? null : { event_id: oldestEventId, session_id: oldestSessionId, waiting_seconds: Math.round(inbox.oldestWaitingSeconds * 10) / 10 },
    dead_letters: { deliveries: Number(row?.deliveries ?? 0), reviews: Number(row?.reviews ?? 0), cron_jobs: Number(row?.cron_jobs ?? 0) },
  };
}

/**
 * The operator's view: Bull Board for the BullMQ queues at /admin/queues, and the cluster status and
 * the Postgres-side jobs under /v1/admin (behind the API token like the rest of /v1).
 */
export function registerAdminRoutes(app: FastifyInstance, deps: AdminDependencies): void {
  // Fastify loads the plugin before listening; the board's routes inherit this scope's token check.
  void app.register(async (scope) => {
    scope.addHook('onRequest', async (request, reply) => {
      if (authorizedForAdmin(request, deps.config.apiToken)) return undefined;
      reply.header('www-authenticate', 'Basic realm="Herald admin", charset="UTF-8"');
      return sendError(reply, 401, 'unauthorized', 'the admin view needs the API token: Authorization: Bearer <HERALD_API_TOKEN>, or any user name with the token as the password');
    });
    const board = new FastifyAdapter();
    board.setBasePath(BOARD_PATH);
    // The board's adapter is typed for Redis queues but uses only the backend-neutral API.
    createBullBoard({ queues: deps.queues.map((queue) => new BullMQAdapter(queue as unknown as ConstructorParameters<typeof BullMQAdapter>[0])), serverAdapter: board, options: { uiConfig: { boardTitle: 'Herald' } } });
    await scope.register(board.registerPlugin(), { prefix: BOARD_PATH });
  });

  app.get('/v1/admin/status', async () => clusterStatus(deps));

  app.get('/v1/admin/jobs', async (request, reply) => {
    const parsed = jobsQuery.safeParse(request.query);
    if (!parsed.success) {
      const issue = firstIssue(parsed.error);
      return sendError(reply, 400, 'invalid_request', issue.message, issue.field);
    }
    const { queue, status, limit } = parsed.data;
    const spec = POSTGRES_QUEUES[queue];
    const where = status === undefined ? sql`` : sql`WHERE status = ${status}`;
    const { rows } = await sql`SELECT ${sql.raw(spec.columns)} FROM ${sql.table(spec.table)} ${where} ORDER BY ${sql.raw(spec.order)} DESC LIMIT ${limit}`.execute(deps.db);
    return { queue, jobs: rows };
  });
}
