import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { FastifyAdapter } from '@bull-board/fastify';
import { CHAT_PLATFORMS, PLATFORM_FACTS } from '@herald/core';
import type { Config } from '@herald/core';
import type { Db } from '@herald/db';
import { bullmqDepth } from '@herald/queue';
import type { NoticeBus, RunQueue } from '@herald/queue';
import { listCronRunJobs } from '@herald/cron';
import { listOutboxJobs } from '@herald/delivery';
import { listReviewJobs } from '@herald/knowledge';
import { countDeadLetters, listInboxJobs } from '@herald/session';
import { inboxDepth } from '@herald/inbox';
import { sendError } from './api-errors.ts';
import { ADMIN_VIEW_PATH } from './api-auth.ts';
import { firstIssue } from './message-body.ts';
import { withContract } from './contracts/route-contract.ts';
import { clusterStatus as clusterStatusSchema, postgresJobs } from './contracts/admin-views.ts';

export interface AdminDependencies {
  config: Config;
  db: Db;
  notices: NoticeBus;
  /** The BullMQ queues the board shows (runs, reviews). */
  queues: readonly RunQueue[];
}

const ROLES = ['ingress', 'worker', 'reviewer', 'scheduler'] as const;

// The Postgres-side queues, each a table with a status column and its own open states, each listed
// by the lib that owns its table.
const POSTGRES_QUEUES = {
  inbox: listInboxJobs,
  outbox: listOutboxJobs,
  reviews: listReviewJobs,
  cron_runs: listCronRunJobs,
} as const;

const jobsQuery = z.object({
  queue: z.enum(Object.keys(POSTGRES_QUEUES) as [keyof typeof POSTGRES_QUEUES], { error: `expected one of ${Object.keys(POSTGRES_QUEUES).join(', ')}` }),
  status: z
    .string()
    .regex(/^[a-z_]{1,20}$/, { error: 'expected a status name' })
    .optional(),
  limit: z.coerce.number().int().min(1).max(500).default(50),
});

/** The kinds herald_dead_letters() lists, under the names GET /v1/admin/status counts them by. */
const DEAD_LETTER_COUNTS: Record<string, string> = {
  delivery: 'deliveries',
  review: 'reviews',
  cron_job: 'cron_jobs',
  // Each chat platform's failed inbound updates, under its registry kind (telegram_update: telegram_updates).
  ...Object.fromEntries(CHAT_PLATFORMS.map((platform): [string, string] => [PLATFORM_FACTS[platform].deadLetterKind, `${PLATFORM_FACTS[platform].deadLetterKind}s`])),
  run: 'runs',
};

/** What `herald status` shows: live processes per role, queue depths, the oldest waiting turn, dead letters. */
async function clusterStatus(deps: AdminDependencies): Promise<Record<string, unknown>> {
  const [alive, inbox, queues, dead] = await Promise.all([
    deps.notices.aliveRoles(deps.config.redis.queuePrefix),
    inboxDepth(deps.db),
    Promise.all(deps.queues.map((queue) => bullmqDepth(queue))),
    countDeadLetters(deps.db),
  ]);
  const { oldestEventId, oldestSessionId, ...inboxQueue } = inbox;
  return {
    roles: Object.fromEntries(ROLES.map((role) => [role, alive[role] ?? 0])),
    queues: [inboxQueue, ...queues].map(({ oldestWaitingSeconds, ...counts }) => ({ ...counts, oldest_waiting_seconds: Math.round(oldestWaitingSeconds * 10) / 10 })),
    oldest_waiting_turn: oldestEventId === null ? null : { event_id: oldestEventId, session_id: oldestSessionId, waiting_seconds: Math.round(inbox.oldestWaitingSeconds * 10) / 10 },
    dead_letters: Object.fromEntries(Object.entries(DEAD_LETTER_COUNTS).map(([kind, name]) => [name, dead[kind] ?? 0])),
  };
}

/**
 * The operator's view: Bull Board for the BullMQ queues at /admin/queues, and the cluster status and
 * the Postgres-side jobs under /v1/admin (behind the API token like the rest of /v1).
 */
export function registerAdminRoutes(app: FastifyInstance, deps: AdminDependencies): void {
  // Fastify loads the plugin before listening; installAuth guards its routes (routeAccess 'admin').
  void app.register(async (scope) => {
    const board = new FastifyAdapter();
    board.setBasePath(ADMIN_VIEW_PATH);
    // The board's adapter is typed for Redis queues but uses only the backend-neutral API.
    createBullBoard({
      queues: deps.queues.map((queue) => new BullMQAdapter(queue as unknown as ConstructorParameters<typeof BullMQAdapter>[0])),
      serverAdapter: board,
      options: { uiConfig: { boardTitle: 'Herald' } },
    });
    await scope.register(board.registerPlugin(), { prefix: ADMIN_VIEW_PATH });
  });

  app.get('/v1/admin/status', withContract({ summary: 'Cluster status: live roles, queue depths, dead letters', tags: ['admin'], response: { 200: clusterStatusSchema } }), async () =>
    clusterStatus(deps),
  );

  app.get('/v1/admin/jobs', withContract({ summary: 'The Postgres-side queues jobs', tags: ['admin'], querystring: jobsQuery, response: { 200: postgresJobs } }), async (request, reply) => {
    const parsed = jobsQuery.safeParse(request.query);
    if (!parsed.success) {
      const issue = firstIssue(parsed.error);
      return sendError(reply, 400, 'invalid_request', issue.message, issue.field);
    }
    const { queue, status, limit } = parsed.data;
    return { queue, jobs: await POSTGRES_QUEUES[queue](deps.db, status, limit) };
  });
}
