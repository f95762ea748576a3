import { z } from 'zod';
import { CHAT_TARGET_SYNTAXES, DEFAULT_ACCOUNT, DELIVERY_ONLY_FACTS, DELIVERY_ONLY_PLATFORMS } from '@herald/core';
import {
  CRON_MISSED_POLICIES,
  createCronJob,
  CronJobInputError,
  getCronJob,
  listCronJobs,
  pauseCronJob,
  removeCronJob,
  requestCronRun,
  resumeCronJob,
  SCHEDULED_PLATFORM,
  updateCronJob,
} from '@herald/cron';
import type { CronJobView, CronScope } from '@herald/cron';
import type { CronOrigin } from '@herald/db';
import { sessionChat } from '@herald/session';
import { defineTool } from '../shared/tool.ts';
import type { ToolContext } from '../shared/tool.ts';

const names = z.array(z.string().max(64)).max(32);

/** Every platform's target syntax, from the registry: a platform added there is offered here. */
// The account form once for all chat platforms, not in each syntax: the description is sent on every request.
const DELIVERY_SYNTAXES = [...CHAT_TARGET_SYNTAXES, ...DELIVERY_ONLY_PLATFORMS.map((platform) => DELIVERY_ONLY_FACTS[platform].targetSyntax)]
  .map((syntax) => `'${syntax.replace('[@<account>]', '')}'`)
  .join(', ');

const cronjobArgs = z.object({
  action: z.enum(['create', 'list', 'update', 'pause', 'resume', 'remove', 'run']),
  job_id: z.string().max(64).optional().describe('The job to update, pause, resume, remove or run'),
  name: z.string().max(200).optional().describe('A short name for the job'),
  prompt: z.string().max(20_000).optional().describe('What each run does; it sees nothing of this conversation'),
  schedule: z.string().max(200).optional().describe("'every 30m', a cron expression ('0 9 * * 1-5'), or once: 'in 2h' or an ISO time"),
  timezone: z.string().max(64).optional().describe("IANA zone, e.g. 'Europe/Berlin' (default UTC)"),
  deliver: z
    .union([z.string().max(2000), z.array(z.string().max(2000)).max(10)])
    .optional()
    .describe(`Where reports go: 'origin' (this chat; default), 'local' (nowhere), ${DELIVERY_SYNTAXES}, 'webhook:<url>'; '<platform>@<account>:...' for another bot`),
  skills: names.optional().describe('Skills the run should use'),
  enabled_toolsets: names.optional().describe('Toolsets the run may use'),
  session: z.string().max(64).optional().describe('Keep one named session across runs; omit for a fresh one per run'),
  missed_policy: z.enum(CRON_MISSED_POLICIES).optional().describe('After downtime: skip missed runs, or run once (default)'),
});

type CronjobArgs = z.infer<typeof cronjobArgs>;

function summary(job: CronJobView) {
  return {
    job_id: job.id,
    name: job.name,
    schedule: job.schedule,
    timezone: job.timezone,
    state: job.state,
    ...(job.pausedReason ? { paused_reason: job.pausedReason } : {}),
    next_run_at: job.nextRunAt?.toISOString() ?? null,
    last_run_at: job.lastRunAt?.toISOString() ?? null,
    deliver: job.deliver.length > 0 ? job.deliver : ['local'],
    session: job.sessionMode === 'named' ? job.sessionName : 'fresh',
    skills: job.skills,
    enabled_toolsets: job.toolsets,
    missed_policy: job.missedPolicy,
  };
}

async function originOf(context: ToolContext): Promise<CronOrigin | null> {
  const session = await sessionChat(context.db, context.sessionId);
  if (!session) return null;
  return {
    platform: session.platform,
    ...(session.account === null || session.account === DEFAULT_ACCOUNT ? {} : { account: session.account }),
    chatType: session.chatType,
    chatId: session.chatId,
    ...(session.threadId === null ? {} : { threadId: session.threadId }),
  };
}

function fail(error: string) {
  return JSON.stringify({ success: false, error });
}

function notFound(jobId: string): string {
  return fail(`no job ${jobId} of yours; list shows your jobs`);
}

function needJob(args: CronjobArgs): string | undefined {
  return args.job_id === undefined ? undefined : args.job_id.trim();
}

async function createJob(args: CronjobArgs, context: ToolContext, origin: CronOrigin | null): Promise<string> {
  if (args.prompt === undefined || args.schedule === undefined) return fail('create needs a prompt and a schedule');
  const { prompt, schedule } = args;
  const job = await context.fencedWrite((trx) =>
    createCronJob(trx, {
      profileId: context.profileId,
      creatorUserId: context.userId,
      byOperator: context.operator === true,
      mailDomains: context.mailDomains,
      platformAccounts: context.platformAccounts,
      origin,
      prompt,
      schedule,
      name: args.name,
      timezone: args.timezone,
      deliver: args.deliver,
      skills: args.skills,
      toolsets: args.enabled_toolsets,
      sessionMode: args.session === undefined ? 'fresh' : 'named',
      sessionName: args.session,
      missedPolicy: args.missed_policy,
    }),
  );
  return JSON.stringify({ success: true, job: summary(job) });
}

async function updateJob(args: CronjobArgs, jobId: string, context: ToolContext, scope: CronScope): Promise<string> {
  const changes = {
    name: args.name,
    prompt: args.prompt,
    schedule: args.schedule,
    timezone: args.timezone,
    deliver: args.deliver,
    skills: args.skills,
    toolsets: args.enabled_toolsets,
    sessionName: args.session,
    missedPolicy: args.missed_policy,
    byOperator: context.operator === true,
    mailDomains: context.mailDomains,
    platformAccounts: context.platformAccounts,
  };
  const job = await context.fencedWrite((trx) => updateCronJob(trx, jobId, changes, scope));
  return job ? JSON.stringify({ success: true, job: summary(job) }) : notFound(jobId);
}

async function run(args: CronjobArgs, context: ToolContext, origin: CronOrigin | null): Promise<string> {
  // The agent acts for the person it talks to: only their jobs in this profile.
  const scope: CronScope = { profileId: context.profileId, userId: context.userId };
  if (args.action === 'list') {
    const jobs = await listCronJobs(context.db, scope);
    return JSON.stringify({ success: true, jobs: jobs.map(summary) });
  }
  if (args.action === 'create') return createJob(args, context, origin);
  const jobId = needJob(args);
  if (jobId === undefined) return fail(`${args.action} needs a job_id (see action list)`);
  switch (args.action) {
    case 'update':
      return updateJob(args, jobId, context, scope);
    case 'pause': {
      const job = await context.fencedWrite((trx) => pauseCronJob(trx, jobId, 'paused by its owner', scope));
      return job ? JSON.stringify({ success: true, job: summary(job) }) : notFound(jobId);
    }
    case 'resume': {
      const job = await context.fencedWrite((trx) => resumeCronJob(trx, jobId, scope));
      return job ? JSON.stringify({ success: true, job: summary(job) }) : notFound(jobId);
    }
    case 'remove': {
      const removed = await context.fencedWrite((trx) => removeCronJob(trx, jobId, scope));
      return removed ? JSON.stringify({ success: true, removed: jobId }) : notFound(jobId);
    }
    case 'run': {
      const runRow = await context.fencedWrite((trx) => requestCronRun(trx, jobId, scope));
      if (!runRow) return notFound(jobId);
      const job = await getCronJob(context.db, jobId, scope);
      return JSON.stringify({
        success: true,
        run_id: runRow.id,
        note: 'The run starts within seconds; its report goes to the job’s delivery targets.',
        ...(job ? { job: summary(job) } : {}),
      });
    }
  }
}

export const cronjobTool = defineTool({
  name: 'cronjob',
  toolset: 'cronjob',
  description:
    'Schedule work for the person: create (prompt, schedule), list, update, pause, resume, remove, or run now. Each run ' +
    'is an unattended agent run whose final answer goes to deliver; an answer of exactly [SILENT] delivers nothing.',
  guidance: 'Use the cronjob tool for anything recurring or later ("every morning", "in 2 hours"). Write the prompt so it stands alone, and confirm the schedule and time zone with the person.',
  schema: cronjobArgs,
  replaySafe: false,
  async execute(args, context) {
    const origin = await originOf(context);
    if (origin?.platform === SCHEDULED_PLATFORM) {
      return fail('cronjob is not available inside a scheduled run');
    }
    try {
      return await run(args, context, origin);
    } catch (error) {
      if (error instanceof CronJobInputError) return fail(error.message);
      throw error;
    }
  },
});
