import type { ColumnType, Generated, GeneratedAlways } from 'kysely';

type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
type NullableTimestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
// pg returns bigint as a string; we keep counters well inside Number range and parse on read.
type BigIntColumn = ColumnType<string, number | bigint | string, number | bigint | string>;
type Json<T> = ColumnType<T, string, string>;

export type QueueMode = 'followup' | 'collect' | 'steer' | 'interrupt';
export type EventStatus = 'pending' | 'processing' | 'done' | 'failed';
export type TurnStatus = 'running' | 'waiting' | 'done' | 'failed';
export type MessageRole = 'user' | 'assistant' | 'tool';

export interface StoredToolCall {
  id: string;
  name: string;
  arguments: string;
}

export interface ProfilesTable {
  id: string;
  display_name: string;
  identity: Generated<string>;
  created_at: Generated<Date>;
  memory_char_limit: Generated<number>;
  user_char_limit: Generated<number>;
  tool_policy: ColumnType<Record<string, unknown>, string | undefined, string>;
  memory_review_interval: Generated<number>;
  skill_review_interval: Generated<number>;
  /** Chat types whose sessions everyone in the profile may search (history search scope). */
  search_shared_chat_types: Generated<string[]>;
}

export type MemoryStore = 'memory' | 'user';

export interface MemoryEntriesTable {
  id: Generated<BigIntColumn>;
  profile_id: string;
  store: MemoryStore;
  user_id: Generated<string>;
  content: string;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface ProfileDocumentsTable {
  profile_id: string;
  name: string;
  content: string;
  updated_at: Generated<Date>;
}

export interface SessionsTable {
  id: string;
  profile_id: string;
  session_key: string;
  platform: string;
  chat_type: string;
  chat_id: string;
  thread_id: string | null;
  origin_user_id: string | null;
  system_prompt: string | null;
  queue_mode: Generated<QueueMode>;
  wake_generation: Generated<BigIntColumn>;
  parent_session_id: string | null;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface SessionRoutesTable {
  session_key: string;
  session_id: string;
  updated_at: Generated<Date>;
}

export interface InboundEventsTable {
  id: string;
  session_id: string;
  dedupe_key: string | null;
  platform: string;
  user_id: string;
  user_name: string | null;
  text: string;
  kind: Generated<'message' | 'command'>;
  status: Generated<EventStatus>;
  turn_id: string | null;
  reply_text: string | null;
  error: string | null;
  received_at: Generated<Date>;
  completed_at: NullableTimestamp;
  platform_message_id: Generated<string | null>;
}

export interface TurnsTable {
  id: string;
  session_id: string;
  status: Generated<TurnStatus>;
  attempts: Generated<number>;
  iterations: Generated<number>;
  worker: string | null;
  error: string | null;
  started_at: Generated<Date>;
  ended_at: NullableTimestamp;
}

export interface MessagesTable {
  id: Generated<BigIntColumn>;
  session_id: string;
  seq: number;
  turn_id: string | null;
  role: MessageRole;
  content: string;
  tool_calls: Json<StoredToolCall[]> | null;
  tool_call_id: string | null;
  tool_name: string | null;
  created_at: Generated<Date>;
  /** Tool names and call arguments as words; maintained by Postgres (migrations/0005_search.sql). */
  tool_text: GeneratedAlways<string | null>;
  search_vector: GeneratedAlways<string>;
}

export interface ModelCallsTable {
  id: Generated<BigIntColumn>;
  session_id: string;
  turn_id: string | null;
  provider: string;
  model: string;
  input_tokens: number;
  output_tokens: number;
  cached_input_tokens: number;
  cache_write_tokens: number;
  latency_ms: number;
  finish_reason: string;
  created_at: Generated<Date>;
}

export interface SessionLeasesTable {
  session_id: string;
  owner: string;
  token: BigIntColumn;
  expires_at: Timestamp;
  released: Generated<boolean>;
}

export interface SessionTodosTable {
  session_id: string;
  items: Json<unknown[]>;
  revision: number;
  updated_at: Generated<Date>;
}

export type WaitKind = 'approval' | 'clarify';
export type WaitStatus = 'pending' | 'approved' | 'denied' | 'answered' | 'expired';

export interface ToolWaitsTable {
  id: string;
  session_id: string;
  turn_id: string;
  tool_call_id: string;
  kind: WaitKind;
  tool_name: string;
  arguments: string;
  pattern_key: string | null;
  prompt: string;
  choices: ColumnType<string[] | null, string | null, string | null>;
  not_started: Generated<string[]>;
  status: Generated<WaitStatus>;
  answer: string | null;
  answered_by: string | null;
  consumed: Generated<boolean>;
  created_at: Generated<Date>;
  expires_at: Timestamp;
  resolved_at: NullableTimestamp;
}

export interface SessionApprovalsTable {
  session_id: string;
  pattern_key: string;
  approved_by: string;
  created_at: Generated<Date>;
}

export interface ToolRefusalsTable {
  id: Generated<BigIntColumn>;
  session_id: string;
  turn_id: string | null;
  tool_name: string;
  role: string;
  user_id: string;
  reason: string;
  created_at: Generated<Date>;
}

export interface SkillBlobsTable {
  sha256: string;
  content: Buffer;
  created_at: Generated<Date>;
}

export interface SkillsTable {
  profile_id: string;
  name: string;
  version: number;
  description: string;
  category: string | null;
  tags: Generated<string[]>;
  pinned: Generated<boolean>;
  created_by: string;
  deleted_at: NullableTimestamp;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export type CronScheduleKind = 'cron' | 'interval' | 'once';
export type CronSessionMode = 'fresh' | 'named';
export type CronMissedPolicy = 'skip' | 'run_once';
export type CronRunTrigger = 'schedule' | 'missed' | 'manual';
export type CronRunStatus = 'pending' | 'running' | 'succeeded' | 'silent' | 'failed' | 'skipped';

/** Where a job's report goes: a chat on a platform, or an HTTP webhook. */
export type CronTarget =
  | { platform: 'webhook'; url: string }
  | { platform: string; chatId: string; threadId?: string };

/** The chat a job was created from. */
export interface CronOrigin {
  platform: string;
  chatType: string;
  chatId: string;
  threadId?: string;
}

export interface CronClockTable {
  id: Generated<boolean>;
  offset_ms: BigIntColumn;
}

export interface CronJobsTable {
  id: string;
  profile_id: string;
  creator_user_id: string;
  name: string;
  prompt: string;
  schedule: string;
  schedule_kind: CronScheduleKind;
  cron_expr: string | null;
  interval_ms: BigIntColumn | null;
  run_at: NullableTimestamp;
  timezone: Generated<string>;
  session_mode: Generated<CronSessionMode>;
  session_name: string | null;
  skills: Json<string[]>;
  toolsets: Json<string[]>;
  targets: Json<CronTarget[]>;
  origin: Json<CronOrigin> | null;
  enabled: Generated<boolean>;
  paused_reason: string | null;
  missed_policy: Generated<CronMissedPolicy>;
  consecutive_failures: Generated<number>;
  next_run_at: NullableTimestamp;
  last_run_at: NullableTimestamp;
  created_at: Generated<Date>;
  updated_at: Generated<Date>;
}

export interface SkillVersionsTable {
  profile_id: string;
  name: string;
  version: number;
  files: Json<Record<string, string>>;
  action: string;
  author: string;
  note: string | null;
  created_at: Generated<Date>;
}

export interface ReviewCountersTable {
  session_id: string;
  user_turns_since_memory: Generated<number>;
  iterations_since_skill: Generated<number>;
  last_turn_id: string | null;
  updated_at: Generated<Date>;
}

export type ReviewStatus = 'pending' | 'running' | 'done' | 'failed';
export type ReviewKind = 'memory' | 'skill';

export interface ReviewsTable {
  id: string;
  turn_id: string;
  session_id: string;
  profile_id: string;
  user_id: string;
  kinds: ReviewKind[];
  user_turns: number;
  iterations: number;
  tool_definitions: string;
  status: Generated<ReviewStatus>;
  attempts: Generated<number>;
  next_attempt_at: Generated<Date>;
  claim_token: BigIntColumn | null;
  claimed_by: string | null;
  claim_expires_at: NullableTimestamp;
  actions: ColumnType<unknown[], string | undefined, string>;
  summary: string | null;
  error: string | null;
  input_tokens: Generated<number>;
  cached_input_tokens: Generated<number>;
  output_tokens: Generated<number>;
  created_at: Generated<Date>;
  started_at: NullableTimestamp;
  finished_at: NullableTimestamp;
}

export interface CronRunsTable {
  id: string;
  job_id: string;
  scheduled_for: Timestamp;
  trigger: CronRunTrigger;
  status: Generated<CronRunStatus>;
  session_id: string | null;
  event_id: string | null;
  output: string | null;
  error: string | null;
  created_at: Generated<Date>;
  started_at: NullableTimestamp;
  finished_at: NullableTimestamp;
}

export type OutboxStatus = 'pending' | 'sending' | 'delivered' | 'failed';

/** A part of an outbound message whose platform call was started but whose result is unknown. */
export interface InFlightPart {
  part: number;
  marker: string;
  /** The newest platform message id known in the chat before the send, if any. */
  anchor: string | null;
}

export interface OutboxTable {
  id: Generated<string>;
  idempotency_key: string;
  platform: string;
  target: Json<Record<string, string>>;
  text: string;
  session_id: string | null;
  source: string;
  status: Generated<OutboxStatus>;
  attempts: Generated<number>;
  next_attempt_at: Generated<Date>;
  last_error: string | null;
  receipt: Json<Record<string, unknown>> | null;
  created_at: Generated<Date>;
  delivered_at: NullableTimestamp;
  claim_token: string | null;
  claim_expires_at: NullableTimestamp;
  parts_sent: ColumnType<string[], string | undefined, string>;
  in_flight: Json<InFlightPart> | null;
  /** The writing turn's W3C traceparent when tracing was on (migration 0012). */
  trace_parent: Generated<string | null>;
}

export interface PlatformLeasesTable {
  name: string;
  owner: string;
  token: BigIntColumn;
  expires_at: Timestamp;
}

export interface Database {
  profiles: ProfilesTable;
  sessions: SessionsTable;
  session_routes: SessionRoutesTable;
  inbound_events: InboundEventsTable;
  turns: TurnsTable;
  messages: MessagesTable;
  model_calls: ModelCallsTable;
  session_leases: SessionLeasesTable;
  session_todos: SessionTodosTable;
  memory_entries: MemoryEntriesTable;
  profile_documents: ProfileDocumentsTable;
  tool_waits: ToolWaitsTable;
  session_approvals: SessionApprovalsTable;
  tool_refusals: ToolRefusalsTable;
  skill_blobs: SkillBlobsTable;
  skills: SkillsTable;
  skill_versions: SkillVersionsTable;
  review_counters: ReviewCountersTable;
  reviews: ReviewsTable;
  cron_clock: CronClockTable;
  cron_jobs: CronJobsTable;
  cron_runs: CronRunsTable;
  outbox: OutboxTable;
  platform_leases: PlatformLeasesTable;
}

type ColumnsOf<T> = { [K in keyof T]: readonly (keyof T[K])[] };
type Exhaustive<T, List extends ColumnsOf<T>> = {
  [K in keyof T]: Exclude<keyof T[K], List[K][number]> extends never ? true : ['missing columns', Exclude<keyof T[K], List[K][number]>];
};

/**
 * Every table and column of the Kysely types, checked at compile time to be exhaustive and at test
 * time against information_schema, so the types cannot drift from the migrations.
 */
export const SCHEMA_COLUMNS = {
  profiles: [
    'tool_policy',
    'id', 'display_name', 'identity', 'created_at', 'memory_char_limit', 'user_char_limit',
    'memory_review_interval', 'skill_review_interval', 'search_shared_chat_types',
  ],
  memory_entries: ['id', 'profile_id', 'store', 'user_id', 'content', 'created_at', 'updated_at'],
  profile_documents: ['profile_id', 'name', 'content', 'updated_at'],
  sessions: [
    'id', 'profile_id', 'session_key', 'platform', 'chat_type', 'chat_id', 'thread_id',
    'origin_user_id', 'system_prompt', 'queue_mode', 'wake_generation', 'parent_session_id',
    'created_at', 'updated_at',
  ],
  session_routes: ['session_key', 'session_id', 'updated_at'],
  inbound_events: [
    'id', 'session_id', 'dedupe_key', 'platform', 'user_id', 'user_name', 'text', 'kind', 'status',
    'turn_id', 'reply_text', 'error', 'received_at', 'completed_at', 'platform_message_id',
  ],
  turns: ['id', 'session_id', 'status', 'attempts', 'iterations', 'worker', 'error', 'started_at', 'ended_at'],
  messages: [
    'id', 'session_id', 'seq', 'turn_id', 'role', 'content', 'tool_calls', 'tool_call_id',
    'tool_name', 'created_at', 'tool_text', 'search_vector',
  ],
  model_calls: [
    'id', 'session_id', 'turn_id', 'provider', 'model', 'input_tokens', 'output_tokens',
    'cached_input_tokens', 'cache_write_tokens', 'latency_ms', 'finish_reason', 'created_at',
  ],
  session_leases: ['session_id', 'owner', 'token', 'expires_at', 'released'],
  session_todos: ['session_id', 'items', 'revision', 'updated_at'],
  tool_waits: [
    'id', 'session_id', 'turn_id', 'tool_call_id', 'kind', 'tool_name', 'arguments', 'pattern_key',
    'prompt', 'choices', 'not_started', 'status', 'answer', 'answered_by', 'consumed', 'created_at',
    'expires_at', 'resolved_at',
  ],
  session_approvals: ['session_id', 'pattern_key', 'approved_by', 'created_at'],
  tool_refusals: ['id', 'session_id', 'turn_id', 'tool_name', 'role', 'user_id', 'reason', 'created_at'],
  skill_blobs: ['sha256', 'content', 'created_at'],
  skills: [
    'profile_id', 'name', 'version', 'description', 'category', 'tags', 'pinned', 'created_by', 'deleted_at',
    'created_at', 'updated_at',
  ],
  skill_versions: ['profile_id', 'name', 'version', 'files', 'action', 'author', 'note', 'created_at'],
  review_counters: ['session_id', 'user_turns_since_memory', 'iterations_since_skill', 'last_turn_id', 'updated_at'],
  reviews: [
    'id', 'turn_id', 'session_id', 'profile_id', 'user_id', 'kinds', 'user_turns', 'iterations', 'tool_definitions',
    'status', 'attempts', 'next_attempt_at', 'claim_token', 'claimed_by', 'claim_expires_at', 'actions', 'summary',
    'error', 'input_tokens', 'cached_input_tokens', 'output_tokens', 'created_at', 'started_at', 'finished_at',
  ],
  cron_clock: ['id', 'offset_ms'],
  cron_jobs: [
    'id', 'profile_id', 'creator_user_id', 'name', 'prompt', 'schedule', 'schedule_kind', 'cron_expr',
    'interval_ms', 'run_at', 'timezone', 'session_mode', 'session_name', 'skills', 'toolsets', 'targets',
    'origin', 'enabled', 'paused_reason', 'missed_policy', 'consecutive_failures', 'next_run_at',
    'last_run_at', 'created_at', 'updated_at',
  ],
  cron_runs: [
    'id', 'job_id', 'scheduled_for', 'trigger', 'status', 'session_id', 'event_id', 'output', 'error',
    'created_at', 'started_at', 'finished_at',
  ],
  outbox: [
    'id', 'idempotency_key', 'platform', 'target', 'text', 'session_id', 'source', 'status', 'attempts',
    'next_attempt_at', 'last_error', 'receipt', 'created_at', 'delivered_at', 'claim_token',
    'claim_expires_at', 'parts_sent', 'in_flight', 'trace_parent',
  ],
  platform_leases: ['name', 'owner', 'token', 'expires_at'],
} as const satisfies ColumnsOf<Database>;

const exhaustive: Exhaustive<Database, typeof SCHEMA_COLUMNS> = {
  profiles: true,
  sessions: true,
  session_routes: true,
  inbound_events: true,
  turns: true,
  messages: true,
  model_calls: true,
  session_leases: true,
  session_todos: true,
  memory_entries: true,
  profile_documents: true,
  tool_waits: true,
  session_approvals: true,
  tool_refusals: true,
  skill_blobs: true,
  skills: true,
  skill_versions: true,
  review_counters: true,
  reviews: true,
  cron_clock: true,
  cron_jobs: true,
  cron_runs: true,
  outbox: true,
  platform_leases: true,
};
void exhaustive;
