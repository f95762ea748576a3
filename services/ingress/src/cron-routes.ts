import type { FastifyInstance, FastifyReply } from 'fastify';
import { z } from 'zod';
import { apiUserId } from '@herald/core';
import { CRON_MISSED_POLICIES, createCronJob, CronJobInputError, getCronJob, listCronJobs, listCronRuns, pauseCronJob, removeCronJob, requestCronRun, resumeCronJob, updateCronJob } from '@herald/cron';
import type { CronJobView, CronRunView } from '@herald/cron';
import type { Db } from '@herald/db';
import { asActor } from '@herald/audit';
import { sendError } from './api-errors.ts';
import { firstIssue } from './message-body.ts';

const id = z.union([z.string().trim().min(1).max(256), z.number().int().transform(String)]);
const names = z.array(z.string().max(64)).max(32);
const deliver = z.union([z.string().max(2000), z.array(z.string().max(2000)).max(10)]);

const jobFields = {
  name: z.string().max(200).optional(),
  prompt: z.string().max(20_000).optional(),
  schedule: z.string().max(200).optional(),
  timezone: z.string().max(64).optional(),
  deliver: deliver.optional(),
  skills: names.optional(),
  toolsets: names.optional(),
  session: z.string().max(64).optional(),
  missed_policy: z.enum(CRON_MISSED_POLICIES).optional(),
};

const createBody = z
  .object({
    ...jobFields,
    prompt: z.string().max(20_000),
    schedule: z.string().max(200),
    profile: z.string().min(1).max(200).default('main'),
    user_id: id,
    enabled: z.boolean().optional(),
    origin: z
      .object({ platform: z.string().min(1).max(64), chat_type: z.string().min(1).max(64), chat_id: id, thread_id: id.optional() })
      .strict()
      .optional(),
  })
  .strict();

const patchBody = z.object({ ...jobFields, enabled: z.boolean().optional() }).strict();

const listQuery = z.object({ profile: z.string().max(200).optional(), user_id: z.string().max(256).optional() });
const runsQuery = z.object({ limit: z.coerce.number({ error: 'expected a number' }).int().min(1).max(200).default(20) });

function iso(date: Date | null): string | null {
  return date === null ? null : date.toISOString();
}

export function jobJson(job: CronJobView) {
  return {
    job_id: job.id,
    profile: job.profileId,
    user_id: job.creatorUserId,
    name: job.name,
    prompt: job.prompt,
    schedule: job.schedule,
    schedule_kind: job.scheduleKind,
    timezone: job.timezone,
    session_mode: job.sessionMode,
    session: job.sessionName,
    skills: job.skills,
    toolsets: job.toolsets,
    deliver: job.deliver,
    targets: job.targets,
    origin: job.origin,
    enabled: job.enabled,
    state: job.state,
    paused_reason: job.pausedReason,
    missed_policy: job.missedPolicy,
    consecutive_failures: job.consecutiveFailures,
    next_run_at: iso(job.nextRunAt),
    last_run_at: iso(job.lastRunAt),
    created_at: job.createdAt.toISOString(),
  };
}

export function runJson(run: CronRunView) {
  return {
    run_id: run.id,
    job_id: run.jobId,
    scheduled_for: run.scheduledFor.toISOString(),
    trigger: run.trigger,
    status: run.status,
    session_id: run.sessionId,
    output: run.output,
    error: run.error,
    started_at: iso(run.startedAt),
    finished_at: iso(run.finishedAt),
    duration_ms: run.durationMs,
    deliveries: run.deliveries.map((delivery) => ({
      target: delivery.target,
      status: delivery.status,
      attempts: delivery.attempts,
      receipt: delivery.receipt,
      error: delivery.error,
      delivered_at: iso(delivery.deliveredAt),
    })),
  };
}

function invalid(reply: FastifyReply, error: z.ZodError) {
  const issue = firstIssue(error);
  return sendError(reply, 400, 'invalid_request', issue.message, issue.field);
}

/** Maps the store's field names back to the API's. */
const API_FIELD: Record<string, string> = { session_name: 'session', session_mode: 'session' };

async function refusingBadInput<T>(reply: FastifyReply, fn: () => Promise<T>): Promise<T | FastifyReply> {
  try {
    return await fn();
  } catch (error) {
    if (error instanceof CronJobInputError) {
      const field = API_FIELD[error.field] ?? error.field;
      return sendError(reply, 400, 'invalid_request', error.message.replace(`${error.field}:`, `${field}:`), field);
    }
    throw error;
  }
}

/** People's view of cron jobs: CRUD, a run-now trigger and run history with delivery receipts. */
export function registerCronRoutes(app: FastifyInstance, db: Db): void {
  const noJob = (reply: FastifyReply) => sendError(reply, 404, 'not_found', 'no such cron job');

  app.get('/v1/cron/jobs', async (request, reply) => {
    const query = listQuery.safeParse(request.query);
    if (!query.success) return invalid(reply, query.error);
    const jobs = await listCronJobs(db, { profileId: query.data.profile, userId: query.data.user_id === undefined ? undefined : apiUserId(query.data.user_id) });
    return { jobs: jobs.map(jobJson) };
  });

  app.post('/v1/cron/jobs', async (request, reply) => {
    const parsed = createBody.safeParse(request.body ?? {});
    if (!parsed.success) return invalid(reply, parsed.error);
    const body = parsed.data;
    const profile = await db.selectFrom('profiles').select('id').where('id', '=', body.profile).executeTakeFirst();
    if (!profile) return sendError(reply, 400, 'invalid_request', `profile: no profile '${body.profile}'`, 'profile');
    return refusingBadInput(reply, async () => {
      const job = await createCronJob(db, {
        profileId: body.profile,
        creatorUserId: apiUserId(body.user_id),
        prompt: body.prompt,
        schedule: body.schedule,
        name: body.name,
        timezone: body.timezone,
        deliver: body.deliver,
        skills: body.skills,
        toolsets: body.toolsets,
        sessionMode: body.session === undefined ? 'fresh' : 'named',
        sessionName: body.session,
        missedPolicy: body.missed_policy,
        enabled: body.enabled,
        origin: body.origin
          ? {
              platform: body.origin.platform,
              chatType: body.origin.chat_type,
              chatId: body.origin.chat_id,
              ...(body.origin.thread_id === undefined ? {} : { threadId: body.origin.thread_id }),
            }
          : null,
      });
      return reply.code(201).send(jobJson(job));
    });
  });

  app.get<{ Params: { id: string } }>('/v1/cron/jobs/:id', async (request, reply) => {
    const job = await getCronJob(db, request.params.id);
    return job ? jobJson(job) : noJob(reply);
  });

  app.patch<{ Params: { id: string } }>('/v1/cron/jobs/:id', async (request, reply) => {
    const parsed = patchBody.safeParse(request.body ?? {});
    if (!parsed.success) return invalid(reply, parsed.error);
    const body = parsed.data;
    return refusingBadInput(reply, async () => {
      // One transaction, attributed to the API in the audit trail (herald.actor).
      const job = await asActor(db, 'api', async (trx) => {
        let changed = await updateCronJob(trx, request.params.id, {
          name: body.name,
          prompt: body.prompt,
          schedule: body.schedule,
          timezone: body.timezone,
          deliver: body.deliver,
          skills: body.skills,
          toolsets: body.toolsets,
          sessionName: body.session,
          missedPolicy: body.missed_policy,
        });
        if (changed && body.enabled === false && changed.enabled) changed = await pauseCronJob(trx, changed.id, 'paused through the API');
        if (changed && body.enabled === true && !changed.enabled) changed = await resumeCronJob(trx, changed.id);
        return changed;
      });
      return job ? jobJson(job) : noJob(reply);
    });
  });

  app.delete<{ Params: { id: string } }>('/v1/cron/jobs/:id', async (request, reply) => {
    if (!(await asActor(db, 'api', (trx) => removeCronJob(trx, request.params.id)))) return noJob(reply);
    return reply.code(204).send();
  });

  app.post<{ Params: { id: string } }>('/v1/cron/jobs/:id/run', async (request, reply) => {
    const run = await requestCronRun(db, request.params.id);
    return run ? reply.code(202).send(runJson(run)) : noJob(reply);
  });

  app.get<{ Params: { id: string } }>('/v1/cron/jobs/:id/runs', async (request, reply) => {
    const query = runsQuery.safeParse(request.query);
    if (!query.success) return invalid(reply, query.error);
    const job = await getCronJob(db, request.params.id);
    if (!job) return noJob(reply);
    return { runs: (await listCronRuns(db, job.id, query.data.limit)).map(runJson) };
  });
}
