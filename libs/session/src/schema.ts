import type { ColumnType, Generated, GeneratedAlways } from 'kysely';

type Timestamp = ColumnType<Date, Date | string | undefined, Date | string>;
type NullableTimestamp = ColumnType<Date | null, Date | string | null | undefined, Date | string | null>;
// pg returns bigint as a string; we keep counters well inside Number range and parse on read.
type BigIntColumn = ColumnType<string, number | bigint | string, number | bigint | string>;
type Json<T> = ColumnType<T, string, string>;

export type QueueMode = 'followup' | 'collect' | 'steer' | 'interrupt';
export type EventStatus = 'pending' | 'processing' | 'done' | 'failed';
export type TurnStatus = 'running' | 'done' | 'failed';
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
    'id', 'display_name', 'identity', 'created_at', 'memory_char_limit', 'user_char_limit', 'search_shared_chat_types',
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
    'turn_id', 'reply_text', 'error', 'received_at', 'completed_at',
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
};
void exhaustive;
