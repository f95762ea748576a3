import { hostname } from 'node:os';
import { randomUUID } from 'node:crypto';
import { DelayedError } from 'bullmq';
import type { Job } from 'bullmq';
import type { Config, Logger, PriceTable } from '@herald/core';
import type { Provider, RecallProvider } from '@herald/agent';
import type { Db, ProfileCache } from '@herald/db';
import type { Hooks } from '@herald/hooks';
import type { McpTools } from '@herald/mcp';
import type { ToolExposure, ToolRegistry } from '@herald/tools';
import { SessionControlListener } from '@herald/queue';
import type { QueueTransport, RunQueue, RunWorker, WakeJob } from '@herald/queue';
import { contextFromTraceParent, recordDeadLetter, watchTranscriptCache, withSpan } from '@herald/telemetry';
import { drainSession } from './session-drain.ts';
import { deadLetterRun } from './run-dead-letter.ts';
import { isConnectionError } from '@herald/db';
import { LeaseLostError } from '@herald/leases';
import { TranscriptCache } from '@herald/transcript';
import { handOverTurn } from './turn-completion.ts';
import type { ProfileModels } from './profile-models.ts';
import type { AnswerDrafts } from './turn-draft.ts';
import { busyRetryMs } from './busy-retry.ts';

export interface WorkerServiceOptions {
  config: Config;
  db: Db;
  /** The run queue's store: the BullMQ worker, turn-done notices, /stop and interrupt notices. */
  transport: QueueTransport;
  provider: Provider | null;
  /** Writes compression summaries (HERALD_SUMMARY_MODEL); the main provider when not given. */
  summariser?: Provider | null;
  registry: ToolRegistry;
  exposure: ToolExposure;
  logger: Logger;
  recall: RecallProvider | null;
  /** While a session's turns run (a chat's typing indicator); returns the stop function. */
  onSessionActive?: (sessionId: string, platform: string) => () => void;
  /** Lifecycle hooks (docs/hooks.md). */
  hooks?: Hooks | undefined;
  /** Wakes the parent of a child run that ended (docs/subagents.md); without it the reconciler does. */
  queue?: RunQueue | undefined;
  /** The model of delegate_task's children; the main provider when not given. */
  childProvider?: Provider | null | undefined;
  /** MCP servers' tools; none when no server is configured. */
  mcp?: McpTools | undefined;
  /** Profiles' own models; a profile without them uses the ones above. */
  profileModels?: ProfileModels | undefined;
  /** Chats that see the answer grow while it is written (HERALD_STREAMING_<PLATFORM>); none when not given. */
  drafts?: AnswerDrafts | undefined;
  /** What model calls cost (HERALD_PRICES_FILE and the built-in table). */
  prices?: PriceTable | undefined;
  /** The process's profile cache: whether any money budget is on is kept there; read per call without it. */
  profiles?: ProfileCache | undefined;
}

export class WorkerService {
  readonly #options: WorkerServiceOptions;
  readonly #owner = `${hostname()}:${process.pid}:${randomUUID().slice(0, 8)}`;
  readonly #stopping = new AbortController();
  readonly #hardStop = new AbortController();
  readonly #control: SessionControlListener;
  /** Parsed transcripts between this worker's turns (issue 41 point 6). */
  readonly #transcripts: TranscriptCache;
  #worker: RunWorker | undefined;
  #closing: Promise<void> | undefined;
  readonly #unwatchCache: () => void;

  constructor(options: WorkerServiceOptions) {
    this.#options = options;
    this.#transcripts = new TranscriptCache(options.config.roles.worker.transcriptCacheMessages, options.config.roles.worker.transcriptCacheBytes);
    this.#unwatchCache = watchTranscriptCache(() => this.#transcripts.heldMessages);
    this.#control = new SessionControlListener(options.transport.bus, options.config.redis.queuePrefix);
  }

  get owner(): string {
    return this.#owner;
  }

  async start(): Promise<void> {
    if (this.#worker) return;
    const { config, transport, logger } = this.#options;
    await this.#control.start();
    // The span continues the trace of the message that woke the session (carried in the job data).
    const processor = (job: Job<WakeJob>, token: string | undefined) => {
      const attributes = { 'herald.session_id': job.data.sessionId };
      return withSpan('herald.worker.wake', attributes, () => this.#process(job, token), contextFromTraceParent(job.data.traceParent));
    };
    this.#worker = transport.createRunWorker(processor, config.roles.worker.concurrency);
    this.#worker.on('error', (error) => logger.error({ err: error }, 'queue worker error'));
    this.#worker.on('failed', (job, error) => {
      logger.warn({ err: error, jobId: job?.id, attempts: job?.attemptsMade }, 'wake-up job failed');
      // Out of attempts: the reconciler still finds the session, but an operator should know.
      if (job && job.attemptsMade >= (job.opts.attempts ?? 1)) recordDeadLetter('run_job');
    });
  }

  async #process(job: Job<WakeJob>, token: string | undefined): Promise<void> {
    const { sessionId } = job.data;
    const logger = this.#options.logger.child({ jobId: job.id, sessionId });
    let result;
    try {
      result = await this.#drain(job, logger);
    } catch (error) {
      // A storage outage is retried (BullMQ, then the reconciler); a failure of the run's own is
      // retried once and then dead-lettered, so the session's next message is answered.
      if (isConnectionError(error) || LeaseLostError.isInstance(error)) throw error;
      if (await deadLetterRun(this.#options.db, sessionId, error, logger)) {
        recordDeadLetter('run_job');
        return;
      }
      throw error;
    }
    if (result.kind === 'busy' || result.kind === 'stopped') {
      // Hand the wake-up back: it keeps its id, so messages arriving meanwhile still collapse into it.
      await job.moveToDelayed(Date.now() + (result.kind === 'busy' ? busyRetryMs(job.attemptsStarted) : 0), token);
      throw new DelayedError();
    }
  }

  #drain(job: Job<WakeJob>, logger: Logger): ReturnType<typeof drainSession> {
    const { sessionId } = job.data;
    return drainSession(
      {
        ...this.#options,
        ...(this.#options.config.model.streaming ? { stream: this.#options.transport.stream } : {}),
        transcripts: this.#transcripts,
        owner: this.#owner,
        stopping: this.#stopping.signal,
        hardStop: this.#hardStop.signal,
        registerControl: (id, handler) => this.#control.register(id, handler),
        onTurnDone: (turn) => handOverTurn({ ...this.#options, logger, bus: this.#options.transport.bus, queuePrefix: this.#options.config.redis.queuePrefix }, turn),
      },
      sessionId,
      logger,
    );
  }

  /**
   * Stops taking jobs and lets running turns finish. After `graceMs` running turns are abandoned
   * (their leases lapse and another worker resumes them from the persisted steps).
   */
  close(graceMs: number): Promise<void> {
    this.#closing ??= (async () => {
      this.#unwatchCache();
      const worker = this.#worker;
      if (!worker) return;
      this.#stopping.abort();
      const timer = setTimeout(() => this.#hardStop.abort(new Error('shutdown deadline')), graceMs);
      try {
        await worker.close();
      } finally {
        clearTimeout(timer);
      }
    })();
    return this.#closing;
  }
}
