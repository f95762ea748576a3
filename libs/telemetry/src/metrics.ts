import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';

/**
 * Every Herald metric, defined once. A process has one registry; each role's /metrics serves it.
 * Call sites use the small record* functions below, so the names and labels live here only.
 */
export const registry = new Registry();
// The standard process_* and nodejs_* metrics (memory, CPU, event loop lag, GC), unprefixed as usual.
collectDefaultMetrics({ register: registry });

const registers = [registry];
const LATENCY_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

const turns = new Counter({ name: 'herald_turns_total', help: 'Turns finished, by outcome (answered, error, waiting, ...).', labelNames: ['outcome'], registers });
const turnSeconds = new Histogram({
  name: 'herald_turn_duration_seconds',
  help: 'Wall time of one turn on a worker, model time included.',
  labelNames: ['outcome'],
  buckets: LATENCY_BUCKETS,
  registers,
});
const modelCalls = new Counter({
  name: 'herald_model_calls_total',
  help: 'Model calls (each attempt), by provider, model and outcome (ok or the error kind).',
  labelNames: ['provider', 'model', 'outcome'],
  registers,
});
const modelSeconds = new Histogram({ name: 'herald_model_call_duration_seconds', help: 'Latency of one model call attempt.', labelNames: ['provider', 'model'], buckets: LATENCY_BUCKETS, registers });
const modelTokens = new Counter({
  name: 'herald_model_tokens_total',
  help: 'Tokens of answered model calls, by kind: input, output, cached_input (served from the provider cache), cache_write.',
  labelNames: ['provider', 'model', 'kind'],
  registers,
});
const modelFailovers = new Counter({
  name: 'herald_model_failovers_total',
  help: 'Model calls moved to the next model of a failover chain, by the model left, the one tried next and why (the error kind, or resting: every key of it cooling down).',
  labelNames: ['from', 'to', 'reason'],
  registers,
});
const toolCalls = new Counter({
  name: 'herald_tool_calls_total',
  help: 'Tool calls, by tool and outcome (ok, failed, refused, invalid, unknown, waiting).',
  labelNames: ['tool', 'outcome'],
  registers,
});
const toolSeconds = new Histogram({
  name: 'herald_tool_call_duration_seconds',
  help: 'Latency of one tool call, approval checks included.',
  labelNames: ['tool'],
  buckets: LATENCY_BUCKETS,
  registers,
});
const leaseClaims = new Counter({
  name: 'herald_lease_claims_total',
  help: 'Session lease claims: claimed (free), taken_over (the holder died or stalled), busy (a live holder has it).',
  labelNames: ['result'],
  registers,
});
const fencingRejections = new Counter({ name: 'herald_fencing_rejections_total', help: 'Writes refused because the lease token was no longer current.', registers });
const crashRecoveries = new Counter({ name: 'herald_crash_recoveries_total', help: 'Turns resumed after their worker died or lost the lease mid-turn.', registers });
const deliveries = new Counter({ name: 'herald_deliveries_total', help: 'Outbox sends, by platform and outcome (delivered, retry, failed).', labelNames: ['platform', 'outcome'], registers });
const reviews = new Counter({ name: 'herald_reviews_total', help: 'Background reviews, by outcome.', labelNames: ['outcome'], registers });
const cronFires = new Counter({ name: 'herald_cron_fires_total', help: 'Cron runs: fired when dispatched, then succeeded, silent or failed when they finish.', labelNames: ['outcome'], registers });
const searchSeconds = new Histogram({ name: 'herald_search_duration_seconds', help: 'History search latency.', buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1], registers });
const compressions = new Counter({ name: 'herald_compressions_total', help: 'Session compressions, by outcome (compressed, fallback, unchanged, unavailable).', labelNames: ['outcome'], registers });
const compressionSeconds = new Histogram({
  name: 'herald_compression_duration_seconds',
  help: 'Wall time of one compression, by part: total, or summary (the summariser call alone).',
  labelNames: ['part'],
  buckets: LATENCY_BUCKETS,
  registers,
});
const modelCost = new Counter({
  name: 'herald_model_cost_usd_total',
  help: 'What recorded model calls cost in US dollars, from the price table (a model without a price adds 0).',
  labelNames: ['provider', 'model'],
  registers,
});
const quotaRefusals = new Counter({
  name: 'herald_quota_refusals_total',
  help: 'Messages refused by a limit, by limit (turns_per_minute, concurrent_turns, tokens_per_day, attachments, their global_ forms, budget, session_backlog).',
  labelNames: ['limit'],
  registers,
});
const deadLetters = new Counter({ name: 'herald_dead_letters_total', help: 'Work given up on for good, by kind (delivery, run_job, review_job, cron_job).', labelNames: ['kind'], registers });

export function recordTurn(outcome: string, seconds: number): void {
  turns.inc({ outcome });
  turnSeconds.observe({ outcome }, seconds);
}

export interface TokenUsage {
  inputTokens: number;
  outputTokens: number;
  cachedInputTokens: number;
  cacheWriteTokens: number;
}

export function recordModelCall(provider: string, model: string, outcome: string, seconds: number, usage?: TokenUsage): void {
  modelCalls.inc({ provider, model, outcome });
  modelSeconds.observe({ provider, model }, seconds);
  if (!usage) return;
  modelTokens.inc({ provider, model, kind: 'input' }, usage.inputTokens);
  modelTokens.inc({ provider, model, kind: 'output' }, usage.outputTokens);
  modelTokens.inc({ provider, model, kind: 'cached_input' }, usage.cachedInputTokens);
  modelTokens.inc({ provider, model, kind: 'cache_write' }, usage.cacheWriteTokens);
}

export function recordModelCost(provider: string, model: string, costUsd: number): void {
  modelCost.inc({ provider, model }, costUsd);
}

export function recordModelFailover(from: string, to: string, reason: string): void {
  modelFailovers.inc({ from, to, reason });
}

export function recordToolCall(tool: string, outcome: string, seconds: number): void {
  toolCalls.inc({ tool, outcome });
  toolSeconds.observe({ tool }, seconds);
}

export function recordLeaseClaim(result: 'claimed' | 'taken_over' | 'busy'): void {
  leaseClaims.inc({ result });
}

export function recordFencingRejection(): void {
  fencingRejections.inc();
}

export function recordCrashRecovery(): void {
  crashRecoveries.inc();
}

export function recordDelivery(platform: string, outcome: 'delivered' | 'retry' | 'failed'): void {
  deliveries.inc({ platform, outcome });
  if (outcome === 'failed') deadLetters.inc({ kind: 'delivery' });
}

export function recordReview(outcome: string): void {
  reviews.inc({ outcome });
}

export function recordCronFire(outcome: string): void {
  cronFires.inc({ outcome });
}

export function recordSearch(seconds: number): void {
  searchSeconds.observe(seconds);
}

export function recordCompression(outcome: 'compressed' | 'fallback' | 'unchanged' | 'unavailable', seconds: number, summarySeconds: number): void {
  compressions.inc({ outcome });
  compressionSeconds.observe({ part: 'total' }, seconds);
  compressionSeconds.observe({ part: 'summary' }, summarySeconds);
}

export function recordQuotaRefusal(limit: string): void {
  quotaRefusals.inc({ limit });
}

export function recordDeadLetter(kind: string): void {
  deadLetters.inc({ kind });
}

/** A queue's counts at scrape time; `oldestWaitingSeconds` is 0 when nothing waits. */
export interface QueueDepth {
  queue: string;
  waiting: number;
  active: number;
  delayed: number;
  failed: number;
  oldestWaitingSeconds: number;
}

const depthSources = new Set<() => Promise<QueueDepth[]>>();
let sampling: Promise<QueueDepth[]> | undefined;

/** One read of every source per scrape: both queue gauges collect in the same tick and share it. */
function sampleDepths(): Promise<QueueDepth[]> {
  sampling ??= Promise.allSettled([...depthSources].map((source) => source()))
    .then((results) => results.flatMap((result) => (result.status === 'fulfilled' ? result.value : [])))
    .finally(() => {
      sampling = undefined;
    });
  return sampling;
}

new Gauge({
  name: 'herald_queue_jobs',
  help: 'Jobs in each queue by state, read at scrape time (BullMQ in Redis, or the Postgres inbox).',
  labelNames: ['queue', 'state'],
  registers,
  async collect() {
    const depths = await sampleDepths();
    this.reset();
    for (const depth of depths) {
      for (const state of ['waiting', 'active', 'delayed', 'failed'] as const) this.set({ queue: depth.queue, state }, depth[state]);
    }
  },
});

new Gauge({
  name: 'herald_queue_oldest_waiting_seconds',
  help: 'Age of the oldest waiting job (or pending inbound message) per queue.',
  labelNames: ['queue'],
  registers,
  async collect() {
    const depths = await sampleDepths();
    this.reset();
    for (const depth of depths) this.set({ queue: depth.queue }, depth.oldestWaitingSeconds);
  },
});

const transcriptCaches = new Set<() => number>();

new Gauge({
  name: 'herald_transcript_cache_messages',
  help: 'Transcript messages this worker keeps parsed between turns (at most HERALD_TRANSCRIPT_CACHE_MESSAGES).',
  registers,
  collect() {
    this.set([...transcriptCaches].reduce((sum, held) => sum + held(), 0));
  },
});

/** Adds a worker's transcript cache to this process's /metrics; returns its removal. */
export function watchTranscriptCache(held: () => number): () => void {
  transcriptCaches.add(held);
  return () => {
    transcriptCaches.delete(held);
  };
}

/** Adds a source of queue depths to this process's /metrics; returns its removal. */
export function watchQueueDepths(source: () => Promise<QueueDepth[]>): () => void {
  depthSources.add(source);
  return () => {
    depthSources.delete(source);
  };
}
