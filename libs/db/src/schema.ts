import type { ColumnType, Generated, GeneratedAlways } from 'kysely';
import type * as Tables from './generated/tables.ts';
import { PLATFORM_DEAD_LETTER_KINDS } from '@herald/core';

// The table types come from the database (generated/tables.ts, written by `npm run db:types` from a
// freshly migrated database and verified against one in libs/db/test/generated-types.test.ts).
// This file only narrows what the database types loosely: text columns a CHECK constraint limits
// to a few values (the value lists below are checked against those constraints in the same test)
// and jsonb columns whose shape Herald writes.

/** Replaces the types of some columns of a generated table; naming a column it lacks is an error. */
type Refine<Table, Narrow extends { [K in keyof Narrow]: K extends keyof Table ? unknown : never }> = Omit<Table, keyof Narrow> & Narrow;

/** jsonb written as JSON text by Herald, read back parsed by pg. */
type Json<T> = ColumnType<T, string, string>;
type JsonWithDefault<T> = ColumnType<T, string | undefined, string>;

/** Allowed values of text columns, as their CHECK constraints spell them. */
export const ALLOWED_VALUES = {
  'sessions.queue_mode': ['followup', 'collect', 'steer', 'interrupt'],
  'sessions.end_reason': ['compression', 'new', 'reset', 'handoff'],
  'session_handoffs.status': ['pending', 'running', 'done', 'failed'],
  'session_compressions.status': ['running', 'done', 'unchanged'],
  'session_compressions.trigger': ['estimate', 'overflow', 'command', 'messages'],
  'inbound_events.status': ['pending', 'processing', 'done', 'failed'],
  'inbound_events.kind': ['message', 'command'],
  'turns.status': ['running', 'waiting', 'done', 'failed'],
  'subagent_runs.role': ['leaf', 'orchestrator'],
  'subagent_runs.status': ['queued', 'running', 'done', 'cancelled'],
  'subagent_runs.exit_reason': ['completed', 'max_iterations', 'interrupted', 'error', 'timeout', 'refused'],
  'messages.role': ['user', 'assistant', 'tool'],
  'memory_entries.store': ['memory', 'user'],
  'tool_waits.kind': ['approval', 'clarify', 'subagents'],
  'tool_waits.status': ['pending', 'approved', 'denied', 'answered', 'expired'],
  'reviews.status': ['pending', 'running', 'done', 'failed'],
  'cron_jobs.schedule_kind': ['cron', 'interval', 'once'],
  'cron_jobs.session_mode': ['fresh', 'named'],
  'cron_jobs.missed_policy': ['skip', 'run_once'],
  'cron_runs.trigger': ['schedule', 'missed', 'manual'],
  'cron_runs.status': ['pending', 'running', 'succeeded', 'silent', 'failed', 'skipped'],
  'outbox.status': ['pending', 'sending', 'delivered', 'failed'],
  'audit_log.kind': ['tool_call', 'approval_request', 'approval_answer', 'hook_decision', 'admin_change', 'refusal'],
  // Each chat platform's kind, from the registry (a new platform's needs a migration), and failed runs.
  'dead_letters.source': [...PLATFORM_DEAD_LETTER_KINDS, 'run'],
  'hook_events.event': ['cron_fire', 'delivery_failed'],
  'dead_letters.status': ['failing', 'dead'],
  'role_grants.role': ['admin', 'operator', 'member', 'viewer'],
  'console_sessions.via': ['token', 'oidc'],
  'budgets.scope': ['person', 'profile'],
  'budget_warnings.scope': ['person', 'profile'],
  'budget_warnings.period': ['day', 'month'],
  'event_attachments.kind': ['image', 'audio', 'document'],
  'model_calls.kind': ['turn', 'review', 'compression'],
} as const;
type Allowed<Column extends keyof typeof ALLOWED_VALUES> = (typeof ALLOWED_VALUES)[Column][number];

export type QueueMode = Allowed<'sessions.queue_mode'>;
export type EventStatus = Allowed<'inbound_events.status'>;
export type TurnStatus = Allowed<'turns.status'>;
export type MessageRole = Allowed<'messages.role'>;
export type MemoryStore = Allowed<'memory_entries.store'>;
export type WaitKind = Allowed<'tool_waits.kind'>;
export type WaitStatus = Allowed<'tool_waits.status'>;
export type ReviewStatus = Allowed<'reviews.status'>;
/** The kinds of review a completion can trigger (reviews.kinds, a text[] without a CHECK). */
export type ReviewKind = 'memory' | 'skill';
export type CronScheduleKind = Allowed<'cron_jobs.schedule_kind'>;
export type CronSessionMode = Allowed<'cron_jobs.session_mode'>;
export type CronMissedPolicy = Allowed<'cron_jobs.missed_policy'>;
export type CronRunTrigger = Allowed<'cron_runs.trigger'>;
export type CronRunStatus = Allowed<'cron_runs.status'>;
export type OutboxStatus = Allowed<'outbox.status'>;
export type SessionEndReason = Allowed<'sessions.end_reason'>;
export type HandoffStatus = Allowed<'session_handoffs.status'>;
export type CompressionStatus = Allowed<'session_compressions.status'>;
export type CompressionTrigger = Allowed<'session_compressions.trigger'>;
export type AuditKind = Allowed<'audit_log.kind'>;
export type DeadLetterSource = Allowed<'dead_letters.source'>;
export type Role = Allowed<'role_grants.role'>;
export type DeadLetterStatus = Allowed<'dead_letters.status'>;
export type HookEventName = Allowed<'hook_events.event'>;
export type SubagentRole = Allowed<'subagent_runs.role'>;
export type SubagentRunStatus = Allowed<'subagent_runs.status'>;
export type SubagentExitReason = Allowed<'subagent_runs.exit_reason'>;
/** What a model call was for: a turn's own, a background review's, or a compression's summary. */
export type ModelCallKind = Allowed<'model_calls.kind'>;

export interface StoredToolCall {
  id: string;
  name: string;
  arguments: string;
}

/** Where a job's report goes: a chat on a platform, or an HTTP webhook. */
/** `account`: the platform account (bot) that posts; absent for the default one. */
export type CronTarget = { platform: 'webhook'; url: string } | { platform: string; chatId: string; threadId?: string; account?: string };

/** The chat a job was created from. */
export interface CronOrigin {
  platform: string;
  /** The platform account (bot) of the chat, when it is a named one: `origin` reports leave through it. */
  account?: string;
  chatType: string;
  chatId: string;
  threadId?: string;
}

/** A part of an outbound message whose platform call was started but whose result is unknown. */
export interface InFlightPart {
  part: number;
  marker: string;
  /** The newest platform message id known in the chat before the send, if any. */
  anchor: string | null;
}

export type ProfilesTable = Refine<Tables.Profiles, { tool_policy: JsonWithDefault<Record<string, unknown>>; session_reset: JsonWithDefault<unknown[]> }>;
export type MemoryEntriesTable = Refine<Tables.MemoryEntries, { store: MemoryStore }>;
export type ProfileDocumentsTable = Tables.ProfileDocuments;
export type SessionsTable = Refine<Tables.Sessions, { queue_mode: Generated<QueueMode>; end_reason: SessionEndReason | null }>;
export type SessionCompressionsTable = Refine<Tables.SessionCompressions, { status: Generated<CompressionStatus>; trigger: CompressionTrigger }>;
export type SessionRoutesTable = Tables.SessionRoutes;
export type SessionHandoffsTable = Refine<Tables.SessionHandoffs, { status: Generated<HandoffStatus> }>;
export type HomeChatsTable = Tables.HomeChats;
export type InboundEventsTable = Refine<Tables.InboundEvents, { kind: Generated<Allowed<'inbound_events.kind'>>; status: Generated<EventStatus> }>;
export type TurnsTable = Refine<Tables.Turns, { status: Generated<TurnStatus> }>;
export type MessagesTable = Refine<
  Tables.Messages,
  {
    role: MessageRole;
    tool_calls: Json<StoredToolCall[]> | null;
    /** Maintained by Postgres (migrations/functions/herald_tool_text.sql): never written. */
    tool_text: GeneratedAlways<string | null>;
    search_vector: GeneratedAlways<string>;
    /** Copied from the session by the trigger herald_message_scope on insert: never written. */
    profile_id: GeneratedAlways<string>;
    owner_id: GeneratedAlways<string | null>;
    platform: GeneratedAlways<string>;
  }
>;
export type ModelCallsTable = Refine<Tables.ModelCalls, { kind: Generated<ModelCallKind> }>;
export type SessionLeasesTable = Tables.SessionLeases;
export type SessionTodosTable = Refine<Tables.SessionTodos, { items: Json<unknown[]> }>;
export type ToolWaitsTable = Refine<
  Tables.ToolWaits,
  {
    kind: WaitKind;
    status: Generated<WaitStatus>;
    choices: ColumnType<string[] | null, string | null, string | null>;
  }
>;
export type SessionApprovalsTable = Tables.SessionApprovals;
export type ToolRefusalsTable = Tables.ToolRefusals;
export type SkillBlobsTable = Tables.SkillBlobs;
export type SkillsTable = Refine<Tables.Skills, { offered_builtin_files: ColumnType<Record<string, string> | null, string | null, string | null> }>;
export type SkillVersionsTable = Refine<Tables.SkillVersions, { files: Json<Record<string, string>> }>;
export type ReviewCountersTable = Tables.ReviewCounters;
export type ReviewsTable = Refine<Tables.Reviews, { kinds: ReviewKind[]; status: Generated<ReviewStatus>; actions: JsonWithDefault<unknown[]> }>;
export type CronClockTable = Tables.CronClock;
export type CronJobsTable = Refine<
  Tables.CronJobs,
  {
    schedule_kind: CronScheduleKind;
    session_mode: Generated<CronSessionMode>;
    missed_policy: Generated<CronMissedPolicy>;
    skills: Json<string[]>;
    toolsets: Json<string[]>;
    targets: Json<CronTarget[]>;
    origin: Json<CronOrigin> | null;
  }
>;
export type CronRunsTable = Refine<Tables.CronRuns, { trigger: CronRunTrigger; status: Generated<CronRunStatus>; files: JsonWithDefault<StoredFile[]> }>;
/** What a file is to the rest of Herald: its blob (bytes by SHA-256), a safe name, the sniffed type. */
export interface StoredFile {
  sha256: string;
  name: string;
  mime: string;
  size: number;
}
export type AttachmentKind = Allowed<'event_attachments.kind'>;
export type BlobsTable = Tables.Blobs;
export type EventAttachmentsTable = Refine<Tables.EventAttachments, { kind: AttachmentKind }>;
export type OutboxTable = Refine<
  Tables.Outbox,
  {
    target: Json<Record<string, string>>;
    status: Generated<OutboxStatus>;
    receipt: Json<Record<string, unknown>> | null;
    parts_sent: JsonWithDefault<string[]>;
    in_flight: Json<InFlightPart> | null;
    file: Json<StoredFile> | null;
    attachments: JsonWithDefault<StoredFile[]>;
  }
>;
/** A streamed answer's draft messages (migrations/0077_chat_drafts.sql), by its reply's outbox key. */
export type ChatDraftsTable = Refine<Tables.ChatDrafts, { message_ids: JsonWithDefault<string[]> }>;
export type PlatformLeasesTable = Tables.PlatformLeases;
export type AuditLogTable = Refine<Tables.AuditLog, { kind: AuditKind; detail: JsonWithDefault<Record<string, unknown>> }>;
export type HookFiringsTable = Refine<Tables.HookFirings, { directive: Json<Record<string, unknown> | null> | null }>;
export type ProfileHooksTable = Refine<Tables.ProfileHooks, { hooks: JsonWithDefault<unknown[]> }>;
export type ProfileMcpServersTable = Refine<Tables.ProfileMcpServers, { servers: JsonWithDefault<Record<string, unknown>> }>;
export type SessionMcpToolsTable = Refine<Tables.SessionMcpTools, { tools: JsonWithDefault<unknown[]> }>;
export type UsageDaysTable = Tables.UsageDays;
export type BudgetScope = Allowed<'budgets.scope'>;
export type BudgetPeriod = Allowed<'budget_warnings.period'>;
export type BudgetsTable = Refine<Tables.Budgets, { scope: BudgetScope }>;
export type BudgetWarningsTable = Refine<Tables.BudgetWarnings, { scope: BudgetScope; period: BudgetPeriod }>;
export type DeadLettersTable = Refine<Tables.DeadLetters, { source: DeadLetterSource; status: Generated<DeadLetterStatus>; payload: Json<unknown> | null }>;
export type HookEventsTable = Refine<Tables.HookEvents, { event: HookEventName; payload: Json<Record<string, unknown>> }>;
export type SubagentRunsTable = Refine<Tables.SubagentRuns, { role: SubagentRole; status: Generated<SubagentRunStatus>; exit_reason: SubagentExitReason | null }>;

export type RoleGrantsTable = Refine<Tables.RoleGrants, { role: Role }>;

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
  chat_drafts: ChatDraftsTable;
  platform_leases: PlatformLeasesTable;
  session_compressions: SessionCompressionsTable;
  session_handoffs: SessionHandoffsTable;
  home_chats: HomeChatsTable;
  audit_log: AuditLogTable;
  hook_firings: HookFiringsTable;
  profile_hooks: ProfileHooksTable;
  profile_mcp_servers: ProfileMcpServersTable;
  session_mcp_tools: SessionMcpToolsTable;
  usage_days: UsageDaysTable;
  dead_letters: DeadLettersTable;
  hook_events: HookEventsTable;
  subagent_runs: SubagentRunsTable;
  /** A view of running turns (libs/queue turn-stream.ts, raw pg there): listed so it cannot be forgotten. */
  turn_stream_entries: Tables.TurnStreamEntries;
  provider_cooldowns: Tables.ProviderCooldowns;
  people: Tables.People;
  person_identities: Tables.PersonIdentities;
  role_grants: RoleGrantsTable;
  api_tokens: Tables.ApiTokens;
  link_codes: Tables.LinkCodes;
  usage_costs: Tables.UsageCosts;
  budgets: BudgetsTable;
  budget_warnings: BudgetWarningsTable;
  /** Routing rules to profiles, owned by @herald/profiles (binding-store.ts). */
  bindings: Tables.Bindings;
  blobs: BlobsTable;
  event_attachments: EventAttachmentsTable;
  console_sessions: Tables.ConsoleSessions;
}

/** Every generated table is in Database: a table added by a migration cannot be forgotten here. */
type MissingTables = Exclude<keyof Tables.DB, keyof Database>;
const everyTable: MissingTables extends never ? true : ['tables missing from Database', MissingTables] = true;
void everyTable;
