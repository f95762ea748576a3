import { parseArgs } from 'node:util';
import { apiUserId, CHAT_TARGET_SYNTAXES, platformAccountNames } from '@herald/core';
import type { Config } from '@herald/core';
import { createCronJob, CronJobInputError, listCronJobs, listCronRuns, getCronJob, pauseCronJob, removeCronJob, requestCronRun, resumeCronJob } from '@herald/cron';
import { createDb } from '@herald/db';
import type { CronJobView } from '@herald/cron';
import type { Db } from '@herald/db';
import type { CronMissedPolicy } from '@herald/db';
import { usageError } from './setup-error.ts';

export const CRON_USAGE = `herald cron list [--profile P] [--user ID]        list jobs
herald cron add --user ID --schedule S --prompt TEXT [--name N] [--tz ZONE] [--deliver TARGETS]
                [--skills a,b] [--toolsets a,b] [--session NAME] [--missed skip|run_once] [--profile P]
herald cron pause|resume|remove JOB_ID                pause, resume or delete a job
herald cron run JOB_ID                                run a job now (the scheduler picks it up)
herald cron runs JOB_ID [--limit N]                   run history: status, duration, output, deliveries

  schedules: 'every 30m', '0 9 * * 1-5' (with --tz Europe/Berlin), 'in 2h', '2026-12-24T18:00'
  targets:   local | ${CHAT_TARGET_SYNTAXES.join(' | ')} | webhook:<url>, comma-separated`;

function fail(message: string): never {
  throw usageError(message, CRON_USAGE);
}

function list(value: string | undefined): string[] | undefined {
  return value === undefined
    ? undefined
    : value
        .split(',')
        .map((item) => item.trim())
        .filter((item) => item !== '');
}

function line(job: CronJobView): string {
  const next = job.nextRunAt ? job.nextRunAt.toISOString() : '-';
  const deliver = job.deliver.length > 0 ? job.deliver.join(',') : 'local';
  const reason = job.pausedReason ? ` (${job.pausedReason})` : '';
  return `${job.id}  ${job.state}${reason}  next ${next}  "${job.schedule}" ${job.timezone}  -> ${deliver}  ${job.name}`;
}

type CronValues = ReturnType<typeof parseCronArgs>['values'];

function parseCronArgs(argv: string[]) {
  return parseArgs({
    args: argv,
    options: {
      profile: { type: 'string' },
      user: { type: 'string' },
      schedule: { type: 'string' },
      prompt: { type: 'string' },
      name: { type: 'string' },
      tz: { type: 'string' },
      deliver: { type: 'string' },
      skills: { type: 'string' },
      toolsets: { type: 'string' },
      session: { type: 'string' },
      missed: { type: 'string' },
      limit: { type: 'string' },
    },
    allowPositionals: true,
  });
}

const out = (text: string) => process.stdout.write(`${text}\n`);

async function listJobs(db: Db, values: CronValues): Promise<void> {
  const jobs = await listCronJobs(db, { profileId: values.profile, userId: values.user === undefined ? undefined : apiUserId(values.user) });
  if (jobs.length === 0) out('no cron jobs');
  for (const job of jobs) out(line(job));
}

/** Who may deliver where: HERALD_OPERATORS, HERALD_MAIL_ALLOWED_DOMAINS and the platforms' accounts. */
interface TargetRules {
  operators: readonly string[];
  mailDomains: readonly string[];
  platformAccounts: Readonly<Record<string, readonly string[]>>;
}

async function addJob(db: Db, values: CronValues, rules: TargetRules): Promise<void> {
  if (values.user === undefined) fail('cron add needs --user (the job owner)');
  if (values.schedule === undefined || values.prompt === undefined) fail('cron add needs --schedule and --prompt');
  const job = await createCronJob(db, {
    profileId: values.profile ?? 'main',
    creatorUserId: apiUserId(values.user),
    // The same rule as the tool and the API: the owner's chats, or anywhere when they are an operator.
    byOperator: rules.operators.includes(apiUserId(values.user)),
    mailDomains: rules.mailDomains,
    platformAccounts: rules.platformAccounts,
    prompt: values.prompt,
    schedule: values.schedule,
    name: values.name,
    timezone: values.tz,
    deliver: values.deliver ?? 'local',
    skills: list(values.skills),
    toolsets: list(values.toolsets),
    sessionMode: values.session === undefined ? 'fresh' : 'named',
    sessionName: values.session,
    missedPolicy: values.missed as CronMissedPolicy | undefined,
  });
  out(`created ${line(job)}`);
}

async function showRuns(db: Db, jobId: string, values: CronValues): Promise<void> {
  if (!(await getCronJob(db, jobId))) fail(`no cron job ${jobId}`);
  const limit = values.limit === undefined ? 20 : Number(values.limit);
  if (!Number.isInteger(limit) || limit < 1 || limit > 200) fail('--limit: expected a whole number from 1 to 200');
  const runs = await listCronRuns(db, jobId, limit);
  if (runs.length === 0) out('no runs yet');
  for (const run of runs) {
    const duration = run.durationMs === null ? '-' : `${(run.durationMs / 1000).toFixed(1)}s`;
    out(`${run.id}  ${run.scheduledFor.toISOString()}  ${run.trigger}  ${run.status}  ${duration}${run.error ? `  ${run.error}` : ''}`);
    if (run.output) out(`    output: ${run.output.replace(/\s+/g, ' ').slice(0, 200)}`);
    for (const delivery of run.deliveries) {
      out(`    -> ${delivery.target}: ${delivery.status} after ${delivery.attempts} attempt(s)${delivery.error ? ` (${delivery.error})` : ''}`);
    }
  }
}

/** The subcommands that act on one job, by name. */
const JOB_ACTIONS: Record<string, (db: Db, jobId: string, values: CronValues) => Promise<void>> = {
  remove: async (db, jobId) => {
    if (!(await removeCronJob(db, jobId))) fail(`no cron job ${jobId}`);
    out(`removed ${jobId}`);
  },
  run: async (db, jobId) => {
    const run = await requestCronRun(db, jobId);
    if (!run) fail(`no cron job ${jobId}`);
    out(`requested run ${run.id}; the scheduler starts it within a tick`);
  },
  runs: showRuns,
  pause: async (db, jobId) => {
    const job = await pauseCronJob(db, jobId, 'paused by an operator');
    if (!job) fail(`no cron job ${jobId}`);
    out(`paused ${line(job)}`);
  },
  resume: async (db, jobId) => {
    const job = await resumeCronJob(db, jobId);
    if (!job) fail(`no cron job ${jobId}`);
    out(`resumed ${line(job)}`);
  },
};

async function runAction(db: Db, action: string | undefined, jobId: string | undefined, values: CronValues, rules: TargetRules): Promise<void> {
  if (action === 'list') return listJobs(db, values);
  if (action === 'add') return addJob(db, values, rules);
  const jobAction = action === undefined || !Object.hasOwn(JOB_ACTIONS, action) ? undefined : JOB_ACTIONS[action];
  if (jobAction === undefined) fail(action === undefined ? 'cron needs a subcommand' : `unknown cron subcommand '${action}'`);
  if (jobId === undefined) fail(`cron ${action} needs a job id`);
  return jobAction(db, jobId, values);
}

/** `herald cron ...`: operators' view of every job, straight from Postgres (needs DATABASE_URL). */
export async function runCronCommand(argv: string[], config: Config): Promise<void> {
  const { values, positionals } = parseCronArgs(argv);
  const [action, jobId] = positionals;
  if (action === 'help') {
    out(CRON_USAGE);
    return;
  }
  const db = createDb({ url: config.database.url, maxConnections: 2 });
  try {
    await runAction(db, action, jobId, values, { operators: config.people.operators, mailDomains: config.platforms.mailAllowedDomains, platformAccounts: platformAccountNames(config.platforms) });
  } catch (error) {
    if (error instanceof CronJobInputError) fail(error.message);
    throw error;
  } finally {
    await db.destroy();
  }
}
