import { randomUUID } from 'node:crypto';
import type { Expression, ExpressionBuilder, Kysely, Selectable, SqlBool, Transaction } from 'kysely';
import { firstOccurrence, nextOccurrence, parseSchedule, ScheduleError } from './cron-schedule.ts';
import type { CronSchedule } from './cron-schedule.ts';
import { ALLOWED_VALUES } from '@herald/db';
import { isUuid } from '@herald/core';
import { DeliverSpecError, describeTarget, parseDeliver } from './cron-targets.ts';
import { accountRefusal, addressRefusal, refusedTarget, targetRefusal } from './cron-target-rule.ts';
import type { TargetChooser } from './cron-target-rule.ts';
import { cronClock, sendFire } from './cron-fires.ts';
import type { CronClock } from './cron-fires.ts';
import type { CronJobsTable, CronMissedPolicy, CronOrigin, CronSessionMode, CronTarget, Database } from '@herald/db';

type Executor = Kysely<Database> | Transaction<Database>;

/** Bad input for a job; `field` names the argument (schedule, deliver, prompt, ...). */
export class CronJobInputError extends Error {
  override readonly name = 'CronJobInputError';
  readonly field: string;
  constructor(field: string, message: string) {
    super(`${field}: ${message}`);
    this.field = field;
  }
}

/**
 * The platform of scheduled runs' sessions and events. Other features read it to tell an
 * unattended run: the reviewer skips them, and tools that need an approval refuse in them.
 */
export const SCHEDULED_PLATFORM = 'cron';

export const CRON_MISSED_POLICIES = ALLOWED_VALUES['cron_jobs.missed_policy'];
export const CRON_SESSION_MODES = ALLOWED_VALUES['cron_jobs.session_mode'];
export const CRON_PROMPT_MAX_CHARS = 20_000;
const NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;

/** Who may see and change a job: the tool passes both; operators (API, CLI) may pass neither. */
export interface CronScope {
  profileId?: string | undefined;
  userId?: string | undefined;
}

export interface CronJobInput {
  profileId: string;
  creatorUserId: string;
  prompt: string;
  schedule: string;
  name?: string | undefined;
  timezone?: string | undefined;
  sessionMode?: CronSessionMode | undefined;
  sessionName?: string | undefined;
  skills?: readonly string[] | undefined;
  toolsets?: readonly string[] | undefined;
  /** Hermes' deliver: 'origin', 'local', 'telegram:<chat>[:<topic>]', 'discord:<channel>[:<thread>]', 'email:<address>[,<address>]', 'webhook:<url>'. */
  deliver?: string | readonly string[] | undefined;
  origin?: CronOrigin | null | undefined;
  missedPolicy?: CronMissedPolicy | undefined;
  enabled?: boolean | undefined;
  /**
   * Whether the job's owner, or whoever acts for them, is an operator: only then may it deliver
   * outside the chats the owner takes part in (cron-target-rule.ts). A patch without it is not.
   */
  byOperator: boolean;
  /** HERALD_MAIL_ALLOWED_DOMAINS, checked when the job is saved (cron-target-rule.ts). */
  mailDomains?: readonly string[] | undefined;
  /** The accounts each chat platform has (platformAccountNames): a target naming another is refused. */
  platformAccounts?: Readonly<Record<string, readonly string[]>> | undefined;
}

export type CronJobPatch = Partial<Omit<CronJobInput, 'profileId' | 'creatorUserId' | 'origin' | 'enabled'>>;

export type CronJobState = 'scheduled' | 'paused' | 'completed';

export interface CronJobView {
  id: string;
  profileId: string;
  creatorUserId: string;
  name: string;
  prompt: string;
  schedule: string;
  scheduleKind: CronSchedule['kind'];
  timezone: string;
  sessionMode: CronSessionMode;
  sessionName: string | null;
  skills: string[];
  toolsets: string[];
  targets: CronTarget[];
  deliver: string[];
  origin: CronOrigin | null;
  enabled: boolean;
  state: CronJobState;
  pausedReason: string | null;
  missedPolicy: CronMissedPolicy;
  consecutiveFailures: number;
  nextRunAt: Date | null;
  lastRunAt: Date | null;
  createdAt: Date;
}

/** The scheduler's clock: database time plus cron_clock's offset (0 outside tests). */
export async function cronNow(db: Executor): Promise<Date> {
  return (await cronClock(db)).now;
}

export function scheduleOf(row: Pick<Selectable<CronJobsTable>, 'schedule' | 'schedule_kind' | 'cron_expr' | 'interval_ms' | 'run_at' | 'timezone'>): CronSchedule {
  return {
    kind: row.schedule_kind,
    display: row.schedule,
    timezone: row.timezone,
    cronExpr: row.cron_expr,
    intervalMs: row.interval_ms === null ? null : Number(row.interval_ms),
    runAt: row.run_at,
  };
}

export function jobView(row: Selectable<CronJobsTable>): CronJobView {
  const state: CronJobState = !row.enabled ? 'paused' : row.next_run_at === null ? 'completed' : 'scheduled';
  return {
    id: row.id,
    profileId: row.profile_id,
    creatorUserId: row.creator_user_id,
    name: row.name,
    prompt: row.prompt,
    schedule: row.schedule,
    scheduleKind: row.schedule_kind,
    timezone: row.timezone,
    sessionMode: row.session_mode,
    sessionName: row.session_name,
    skills: row.skills,
    toolsets: row.toolsets,
    targets: row.targets,
    deliver: row.targets.map(describeTarget),
    origin: row.origin,
    enabled: row.enabled,
    state,
    pausedReason: row.paused_reason,
    missedPolicy: row.missed_policy,
    consecutiveFailures: row.consecutive_failures,
    nextRunAt: row.next_run_at,
    lastRunAt: row.last_run_at,
    createdAt: row.created_at,
  };
}

function checkNames(field: string, names: readonly string[] | undefined): string[] {
  const list = [...new Set((names ?? []).map((name) => name.trim()).filter((name) => name !== ''))];
  if (list.length > 32) throw new CronJobInputError(field, 'at most 32 names');
  for (const name of list) {
    if (!NAME_PATTERN.test(name)) throw new CronJobInputError(field, `'${name}' is not a valid name (letters, digits, . _ -, at most 64)`);
  }
  return list;
}

function checkPrompt(prompt: string): string {
  const text = prompt.trim();
  if (text === '') throw new CronJobInputError('prompt', 'must not be empty');
  if (text.length > CRON_PROMPT_MAX_CHARS) throw new CronJobInputError('prompt', `at most ${CRON_PROMPT_MAX_CHARS} characters`);
  return text;
}

function checkSession(mode: CronSessionMode | undefined, name: string | undefined): { mode: CronSessionMode; name: string | null } {
  const sessionMode = mode ?? (name === undefined ? 'fresh' : 'named');
  if (!(CRON_SESSION_MODES as readonly string[]).includes(sessionMode)) {
    throw new CronJobInputError('session_mode', `expected one of ${CRON_SESSION_MODES.join(', ')}`);
  }
  if (sessionMode === 'fresh') return { mode: 'fresh', name: null };
  const sessionName = name?.trim() ?? '';
  if (!NAME_PATTERN.test(sessionName)) {
    throw new CronJobInputError('session_name', 'a named session needs a name (letters, digits, . _ -, at most 64)');
  }
  return { mode: 'named', name: sessionName };
}

function checkPolicy(policy: string | undefined): CronMissedPolicy | undefined {
  if (policy === undefined) return undefined;
  if (!(CRON_MISSED_POLICIES as readonly string[]).includes(policy)) {
    throw new CronJobInputError('missed_policy', `expected one of ${CRON_MISSED_POLICIES.join(', ')}`);
  }
  return policy as CronMissedPolicy;
}

function schedule(text: string, timezone: string | undefined, now: Date): CronSchedule {
  try {
    return parseSchedule(text, { timezone, now });
  } catch (error) {
    if (error instanceof ScheduleError) {
      throw new CronJobInputError(error.field, error.message);
    }
    throw error;
  }
}

async function targets(db: Executor, spec: CronJobInput['deliver'], origin: CronOrigin | null | undefined, chooser: TargetChooser): Promise<CronTarget[]> {
  try {
    const parsed = parseDeliver(spec, origin);
    const addressRefused = addressRefusal(chooser, parsed) ?? accountRefusal(chooser, parsed);
    if (addressRefused !== undefined) throw new DeliverSpecError(addressRefused);
    const refused = await refusedTarget(db, chooser, parsed);
    if (refused !== undefined) throw new DeliverSpecError(targetRefusal(refused));
    return parsed;
  } catch (error) {
    if (error instanceof DeliverSpecError) throw new CronJobInputError('deliver', error.message);
    throw error;
  }
}

function scheduleColumns(parsed: CronSchedule) {
  return {
    schedule: parsed.display,
    schedule_kind: parsed.kind,
    cron_expr: parsed.cronExpr,
    interval_ms: parsed.intervalMs,
    run_at: parsed.runAt,
    timezone: parsed.timezone,
  };
}

/** Runs `fn` in `db` when it is a transaction already, else in a new one. */
export function inTransaction<T>(db: Executor, fn: (trx: Transaction<Database>) => Promise<T>): Promise<T> {
  return db.isTransaction ? fn(db as Transaction<Database>) : db.transaction().execute(fn);
}

/** Sends the fire of the job's next occurrence when it has one and is enabled. */
async function scheduleNext(trx: Transaction<Database>, row: Selectable<CronJobsTable>, clock: CronClock): Promise<void> {
  if (row.enabled && row.next_run_at !== null) await sendFire(trx, row.id, row.next_run_at, clock);
}

/**
 * Validates everything first, so a bad job is refused whole with the field that is wrong. The job
 * and the fire of its first occurrence commit together.
 */
export async function createCronJob(db: Executor, input: CronJobInput): Promise<CronJobView> {
  const prompt = checkPrompt(input.prompt);
  const clock = await cronClock(db);
  const now = clock.now;
  const parsed = schedule(input.schedule, input.timezone, now);
  const session = checkSession(input.sessionMode, input.sessionName);
  const name = input.name?.trim() || prompt.slice(0, 50);
  if (name.length > 200) throw new CronJobInputError('name', 'at most 200 characters');
  const values = {
    id: randomUUID(),
    profile_id: input.profileId,
    creator_user_id: input.creatorUserId,
    name,
    prompt,
    ...scheduleColumns(parsed),
    session_mode: session.mode,
    session_name: session.name,
    skills: JSON.stringify(checkNames('skills', input.skills)),
    toolsets: JSON.stringify(checkNames('toolsets', input.toolsets)),
    targets: JSON.stringify(
      await targets(db, input.deliver, input.origin, {
        profileId: input.profileId,
        userId: input.creatorUserId,
        operator: input.byOperator,
        addressAllowlist: input.mailDomains,
        accounts: input.platformAccounts,
      }),
    ),
    origin: input.origin ? JSON.stringify(input.origin) : null,
    enabled: input.enabled ?? true,
    missed_policy: checkPolicy(input.missedPolicy) ?? 'run_once',
    next_run_at: firstOccurrence(parsed, now),
  };
  return inTransaction(db, async (trx) => {
    const row = await trx.insertInto('cron_jobs').values(values).returningAll().executeTakeFirstOrThrow();
    await scheduleNext(trx, row, clock);
    return jobView(row);
  });
}

function inScope(scope: CronScope) {
  return (eb: ExpressionBuilder<Database, 'cron_jobs'>) => {
    const conditions: Expression<SqlBool>[] = [];
    if (scope.profileId !== undefined) conditions.push(eb('profile_id', '=', scope.profileId));
    if (scope.userId !== undefined) conditions.push(eb('creator_user_id', '=', scope.userId));
    return eb.and(conditions);
  };
}

export async function getCronJob(db: Executor, id: string, scope: CronScope = {}): Promise<CronJobView | undefined> {
  if (!isUuid(id)) return undefined;
  const row = await db.selectFrom('cron_jobs').selectAll().where('id', '=', id).where(inScope(scope)).executeTakeFirst();
  return row ? jobView(row) : undefined;
}

export async function listCronJobs(db: Executor, scope: CronScope = {}): Promise<CronJobView[]> {
  const rows = await db.selectFrom('cron_jobs').selectAll().where(inScope(scope)).orderBy('created_at').orderBy('id').execute();
  return rows.map(jobView);
}

/**
 * Changes a job. A new schedule or time zone restarts the schedule from now; everything else keeps
 * the next run as it is. Returns undefined when the job does not exist in the scope.
 */
export async function updateCronJob(db: Executor, id: string, patch: CronJobPatch, scope: CronScope = {}): Promise<CronJobView | undefined> {
  const current = await getCronJob(db, id, scope);
  if (!current) return undefined;
  const changes: Record<string, unknown> = { updated_at: new Date() };
  if (patch.prompt !== undefined) changes.prompt = checkPrompt(patch.prompt);
  if (patch.name !== undefined) {
    const name = patch.name.trim();
    if (name === '' || name.length > 200) throw new CronJobInputError('name', 'between 1 and 200 characters');
    changes.name = name;
  }
  const clock = await cronClock(db);
  if (patch.schedule !== undefined || patch.timezone !== undefined) {
    const parsed = schedule(patch.schedule ?? current.schedule, patch.timezone ?? current.timezone, clock.now);
    Object.assign(changes, scheduleColumns(parsed), { next_run_at: firstOccurrence(parsed, clock.now) });
  }
  if (patch.sessionMode !== undefined || patch.sessionName !== undefined) {
    const session = checkSession(patch.sessionMode ?? (patch.sessionName !== undefined ? 'named' : current.sessionMode), patch.sessionName ?? current.sessionName ?? undefined);
    changes.session_mode = session.mode;
    changes.session_name = session.name;
  }
  if (patch.skills !== undefined) changes.skills = JSON.stringify(checkNames('skills', patch.skills));
  if (patch.toolsets !== undefined) changes.toolsets = JSON.stringify(checkNames('toolsets', patch.toolsets));
  if (patch.deliver !== undefined) {
    const chooser = { profileId: current.profileId, userId: current.creatorUserId, operator: patch.byOperator ?? false, addressAllowlist: patch.mailDomains, accounts: patch.platformAccounts };
    changes.targets = JSON.stringify(await targets(db, patch.deliver, current.origin, chooser));
  }
  const policy = checkPolicy(patch.missedPolicy);
  if (policy !== undefined) changes.missed_policy = policy;
  return inTransaction(db, async (trx) => {
    const row = await trx.updateTable('cron_jobs').set(changes).where('id', '=', id).returningAll().executeTakeFirst();
    // A rescheduled job's old fire finds a different next run when it comes due, and does nothing.
    if (row && 'next_run_at' in changes) await scheduleNext(trx, row, clock);
    return row ? jobView(row) : undefined;
  });
}

/** Pauses a job; it fires nothing until resumed (its waiting fire does nothing when it comes due). */
export async function pauseCronJob(db: Executor, id: string, reason: string, scope: CronScope = {}): Promise<CronJobView | undefined> {
  if (!isUuid(id)) return undefined;
  const row = await db.updateTable('cron_jobs').set({ enabled: false, paused_reason: reason, updated_at: new Date() }).where('id', '=', id).where(inScope(scope)).returningAll().executeTakeFirst();
  return row ? jobView(row) : undefined;
}

/**
 * Resumes a paused job from now: occurrences during the pause are not caught up, and the failure
 * count starts over. A one-shot whose time passed while paused stays completed.
 */
export async function resumeCronJob(db: Executor, id: string, scope: CronScope = {}): Promise<CronJobView | undefined> {
  const current = await getCronJob(db, id, scope);
  if (!current) return undefined;
  const clock = await cronClock(db);
  return inTransaction(db, async (trx) => {
    const row = await trx.selectFrom('cron_jobs').selectAll().where('id', '=', id).forUpdate().executeTakeFirstOrThrow();
    const parsed = scheduleOf(row);
    const next = parsed.kind === 'once' ? (row.next_run_at ?? null) : nextOccurrence(parsed, clock.now, parsed.kind === 'interval' ? row.next_run_at : null);
    const updated = await trx
      .updateTable('cron_jobs')
      .set({ enabled: true, paused_reason: null, consecutive_failures: 0, next_run_at: next, updated_at: new Date() })
      .where('id', '=', id)
      .returningAll()
      .executeTakeFirstOrThrow();
    await scheduleNext(trx, updated, clock);
    return jobView(updated);
  });
}

export async function removeCronJob(db: Executor, id: string, scope: CronScope = {}): Promise<boolean> {
  if (!isUuid(id)) return false;
  const result = await db.deleteFrom('cron_jobs').where('id', '=', id).where(inScope(scope)).executeTakeFirst();
  return Number(result.numDeletedRows) > 0;
}
