import type PgBoss from 'pg-boss';

/**
 * A queue and how pg-boss treats its jobs. The policy lives on the queue, so every sender (a
 * worker, the API, the CLI, a tool) gets the same retries without knowing them.
 */
export interface QueueSpec {
  name: string;
  /** Retries after the first run; past them the job fails and goes to `deadLetter`. */
  retryLimit: number;
  /** Seconds before the first retry; with `retryBackoff`, doubled (with jitter) per retry. */
  retryDelaySeconds: number;
  retryBackoff: boolean;
  /** How long one run may take; pg-boss's maintenance fails (and retries) a run older than this. */
  expireInSeconds: number;
  /** How long a queued job may wait past its start time before pg-boss drops it. */
  retentionMinutes: number;
  /** Where a job goes after its last retry failed. */
  deadLetter?: string | undefined;
}

function queueOptions(spec: QueueSpec): PgBoss.Queue {
  return {
    name: spec.name,
    retryLimit: spec.retryLimit,
    retryDelay: spec.retryDelaySeconds,
    retryBackoff: spec.retryBackoff,
    expireInSeconds: spec.expireInSeconds,
    retentionMinutes: spec.retentionMinutes,
    ...(spec.deadLetter === undefined ? {} : { deadLetter: spec.deadLetter }),
  };
}

/**
 * Creates the queues that do not exist yet and brings every queue's policy to its spec. Dead-letter
 * queues are created before the queues that name them (pg-boss checks the reference).
 */
export async function ensureQueues(boss: PgBoss, specs: readonly QueueSpec[]): Promise<void> {
  const ordered = [...specs].sort((a, b) => Number(a.deadLetter !== undefined) - Number(b.deadLetter !== undefined));
  for (const spec of ordered) {
    await boss.createQueue(spec.name, queueOptions(spec));
    await boss.updateQueue(spec.name, queueOptions(spec));
  }
}

/** Brings existing queues' policy to their specs (one statement each; `herald migrate` created them). */
export async function applyQueuePolicies(boss: PgBoss, specs: readonly QueueSpec[]): Promise<void> {
  for (const spec of specs) await boss.updateQueue(spec.name, queueOptions(spec));
}
