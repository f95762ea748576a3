import type { FastifyInstance, FastifyReply } from 'fastify';
import { z } from 'zod';
import { apiUserId } from '@herald/core';
import {
  CRON_MISSED_POLICIES,
  createCronJob,
  CronJobInputError,
  cronNow,
  getCronJob,
  listCronJobs,
  listCronRuns,
  parseSchedule,
  pauseCronJob,
  removeCronJob,
  requestCronRun,
  resumeCronJob,
  ScheduleError,
  upcomingOccurrences,
  updateCronJob,
} from '@herald/cron';
import type { CronJobView } from '@herald/cron';
import type { Db } from '@herald/db';
import { asActor } from '@herald/audit';
import { sendError, sendInvalid } from './api-errors.ts';
import { jobJson, runJson } from './cron-views.ts';
import { profileState } from './profile-exists.ts';
import { mayAct } from '@herald/people';
import { principalOfRequest } from './api-auth.ts';
import { withContract } from './contracts/route-contract.ts';
import { idParams, noContent } from './contracts/common.ts';
import { cronJobList, cronJobView, cronPreview, cronRunList, cronRunView } from './contracts/cron-views.ts';

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
const previewQuery = z.object({
  schedule: z.string({ error: 'is required' }).max(200),
  timezone: z.string().max(64).optional(),
  count: z.coerce.number({ error: 'expected a number' }).int().min(1).max(20).default(5),
});
const runsQuery = z.object({ limit: z.coerce.number({ error: 'expected a number' }).int().min(1).max(200).default(20) });

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

/** Who may deliver where: HERALD_OPERATORS, HERALD_MAIL_ALLOWED_DOMAINS and the platforms' accounts. */
export interface CronTargetRules {
  operators: readonly string[];
  mailDomains: readonly string[];
  /** platformAccountNames of the config: a target naming a bot this deployment lacks is a 400. */
  platformAccounts?: Readonly<Record<string, readonly string[]>>;
}

function createJob(db: Db, body: z.infer<typeof createBody>, rules: CronTargetRules): Promise<CronJobView> {
  const origin = body.origin;
  return createCronJob(db, {
    profileId: body.profile,
    creatorUserId: apiUserId(body.user_id),
    // The owner's chats only, unless the owner is an operator: the rule the tool and the CLI follow.
    byOperator: rules.operators.includes(apiUserId(body.user_id)),
    mailDomains: rules.mailDomains,
    platformAccounts: rules.platformAccounts,
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
    origin: origin ? { platform: origin.platform, chatType: origin.chat_type, chatId: origin.chat_id, ...(origin.thread_id === undefined ? {} : { threadId: origin.thread_id }) } : null,
  });
}

/** The fields changed, then `enabled` applied as a pause or resume (so the paused reason is kept). */
async function patchJob(db: Db, jobId: string, body: z.infer<typeof patchBody>, rules: CronTargetRules): Promise<CronJobView | undefined> {
  // One transaction, attributed to the API in the audit trail (herald.actor).
  return asActor(db, 'api', async (trx) => {
    const owner = await getCronJob(trx, jobId);
    let job = await updateCronJob(trx, jobId, {
      byOperator: owner !== undefined && rules.operators.includes(owner.creatorUserId),
      mailDomains: rules.mailDomains,
      platformAccounts: rules.platformAccounts,
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
    if (job && body.enabled === false && job.enabled) job = await pauseCronJob(trx, job.id, 'paused through the API');
    if (job && body.enabled === true && !job.enabled) job = await resumeCronJob(trx, job.id);
    return job ?? undefined;
  });
}

/**
 * `GET /v1/cron/preview`: the next runs of a schedule in its zone, parsed and stepped by the
 * scheduler's own functions from the scheduler's clock; a schedule it would refuse is the same 400.
 */
function registerPreviewRoute(app: FastifyInstance, db: Db): void {
  const contract = { summary: 'The next runs of a schedule in a time zone, as the scheduler would fire them', tags: ['cron'], querystring: previewQuery, response: { 200: cronPreview } };
  app.get('/v1/cron/preview', withContract(contract), async (request, reply) => {
    const query = previewQuery.safeParse(request.query ?? {});
    if (!query.success) return sendInvalid(reply, query.error);
    const now = await cronNow(db);
    try {
      const schedule = parseSchedule(query.data.schedule, { timezone: query.data.timezone, now });
      const runs = upcomingOccurrences(schedule, now, query.data.count);
      return { schedule: schedule.display, schedule_kind: schedule.kind, timezone: schedule.timezone, runs: runs.map((run) => run.toISOString()) };
    } catch (error) {
      if (error instanceof ScheduleError) return sendError(reply, 400, 'invalid_request', `${error.field}: ${error.message}`, error.field);
      throw error;
    }
  });
}

const noJob = (reply: FastifyReply) => sendError(reply, 404, 'not_found', 'no such cron job');

/** A job's runs: one started now, and the history with delivery receipts. */
function registerRunRoutes(app: FastifyInstance, db: Db): void {
  app.post<{ Params: { id: string } }>(
    '/v1/cron/jobs/:id/run',
    withContract({ summary: 'Run a cron job now', tags: ['cron'], params: idParams, response: { 202: cronRunView } }),
    async (request, reply) => {
      const run = await requestCronRun(db, request.params.id);
      return run ? reply.code(202).send(runJson(run)) : noJob(reply);
    },
  );

  app.get<{ Params: { id: string } }>(
    '/v1/cron/jobs/:id/runs',
    withContract({ summary: 'A cron job runs with their delivery receipts', tags: ['cron'], params: idParams, querystring: runsQuery, response: { 200: cronRunList } }),
    async (request, reply) => {
      const query = runsQuery.safeParse(request.query);
      if (!query.success) return sendInvalid(reply, query.error);
      const job = await getCronJob(db, request.params.id);
      if (!job) return noJob(reply);
      return { runs: (await listCronRuns(db, job.id, query.data.limit)).map(runJson) };
    },
  );
}

/** People's view of cron jobs: CRUD, a run-now trigger and run history with delivery receipts. */
export function registerCronRoutes(app: FastifyInstance, db: Db, rules: CronTargetRules): void {
  registerPreviewRoute(app, db);

  app.get('/v1/cron/jobs', withContract({ summary: 'Cron jobs', tags: ['cron'], querystring: listQuery, response: { 200: cronJobList } }), async (request, reply) => {
    const query = listQuery.safeParse(request.query);
    if (!query.success) return sendInvalid(reply, query.error);
    const jobs = await listCronJobs(db, { profileId: query.data.profile, userId: query.data.user_id === undefined ? undefined : apiUserId(query.data.user_id) });
    return { jobs: jobs.map(jobJson) };
  });

  app.post('/v1/cron/jobs', withContract({ summary: 'Create a cron job', tags: ['cron'], body: createBody, response: { 201: cronJobView } }), async (request, reply) => {
    const parsed = createBody.safeParse(request.body ?? {});
    if (!parsed.success) return sendInvalid(reply, parsed.error);
    const body = parsed.data;
    if ((await profileState(db, body.profile)) !== 'active') return sendError(reply, 400, 'invalid_request', `profile: no profile '${body.profile}' takes jobs`, 'profile');
    // A person with an operator grant on the profile chooses targets as HERALD_OPERATORS do.
    const principal = principalOfRequest(request);
    const byGrant = principal.kind === 'person' && mayAct(principal, 'operate', { profileId: body.profile });
    return refusingBadInput(reply, async () => reply.code(201).send(jobJson(await createJob(db, body, byGrant ? { ...rules, operators: [...rules.operators, principal.key] } : rules))));
  });

  app.get<{ Params: { id: string } }>('/v1/cron/jobs/:id', withContract({ summary: 'A cron job', tags: ['cron'], params: idParams, response: { 200: cronJobView } }), async (request, reply) => {
    const job = await getCronJob(db, request.params.id);
    return job ? jobJson(job) : noJob(reply);
  });

  app.patch<{ Params: { id: string } }>(
    '/v1/cron/jobs/:id',
    withContract({ summary: 'Change a cron job; enabled pauses or resumes it', tags: ['cron'], params: idParams, body: patchBody, response: { 200: cronJobView } }),
    async (request, reply) => {
      const parsed = patchBody.safeParse(request.body ?? {});
      if (!parsed.success) return sendInvalid(reply, parsed.error);
      return refusingBadInput(reply, async () => {
        const job = await patchJob(db, request.params.id, parsed.data, rules);
        return job ? jobJson(job) : noJob(reply);
      });
    },
  );

  app.delete<{ Params: { id: string } }>(
    '/v1/cron/jobs/:id',
    withContract({ summary: 'Remove a cron job', tags: ['cron'], params: idParams, response: { 204: noContent } }),
    async (request, reply) => {
      if (!(await asActor(db, 'api', (trx) => removeCronJob(trx, request.params.id)))) return noJob(reply);
      return reply.code(204).send();
    },
  );

  registerRunRoutes(app, db);
}
