import { createRequire } from 'node:module';
import initSqlJs from 'sql.js';
import type { Database as SqliteDatabase } from 'sql.js';
import { readRegularFile } from '../safe-files.ts';
import { HomeError } from './home-error.ts';
import { readableContent } from './message-content.ts';

// Hermes keeps its sessions in $HERMES_HOME/state.db (SQLite, hermes_state.py). We read it with
// sql.js, SQLite compiled to WebAssembly: no compiler on the machine, no native addon to build.
// Hermes adds columns release by release (SCHEMA_VERSION 30 today, with system prompts stored once
// by hash in system_prompts since 25); every read takes what the file has.

export interface HermesUsage {
  input_tokens: number;
  output_tokens: number;
  cache_read_tokens: number;
  cache_write_tokens: number;
  reasoning_tokens: number;
  api_call_count: number;
  estimated_cost_usd: number | null;
  actual_cost_usd: number | null;
  cost_status: string | null;
  cost_source: string | null;
  billing_provider: string | null;
  billing_base_url: string | null;
  billing_mode: string | null;
  pricing_version: string | null;
}

export interface HermesSession {
  id: string;
  source: string;
  userId: string | null;
  chatId: string | null;
  chatType: string | null;
  threadId: string | null;
  systemPrompt: string | null;
  parentId: string | null;
  startedAt: number;
  title: string | null;
  model: string | null;
  endedAt: number | null;
  endReason: string | null;
  usage: HermesUsage;
}

export interface HermesMessage {
  sessionId: string;
  role: string;
  content: string;
  toolCallId: string | null;
  /** JSON text in OpenAI's shape: [{id, type, function: {name, arguments}}]. */
  toolCalls: string | null;
  toolName: string | null;
  timestamp: number;
  reasoning: string | null;
  platformMessageId: string | null;
  /** Hermes hides rewound messages (active = 0, compacted = 0) from replay and search. */
  rewound: boolean;
  /** Archived by an in-place compaction (active = 0, compacted = 1): Hermes no longer replays it. */
  archived: boolean;
  /** Multimodal parts made readable text. */
  multimodal: boolean;
}

export interface HermesState {
  sessions(): HermesSession[];
  /** How many rows the messages table holds (rewound ones and all): what the import is about to read. */
  messageCount(): number;
  /** Every message in replay order (session, then id), one row at a time. */
  messages(): Generator<HermesMessage>;
  /** Upstream fields Herald has no place for: `table.column` -> rows that hold a value. */
  unplaced(): Record<string, number>;
  close(): void;
}

/** The most a state.db may weigh: read whole into memory (sql.js), so bounded. */
const STATE_DB_MAX_BYTES = 8 * 1024 * 1024 * 1024;

const require = createRequire(import.meta.url);

/** Columns the import reads; a column not here that holds values is reported as unplaced. */
const SESSION_COLUMNS = [
  'id',
  'source',
  'user_id',
  'chat_id',
  'chat_type',
  'thread_id',
  'system_prompt',
  'system_prompt_hash',
  'parent_session_id',
  'started_at',
  'ended_at',
  'end_reason',
  'title',
  'model',
  'input_tokens',
  'output_tokens',
  'cache_read_tokens',
  'cache_write_tokens',
  'reasoning_tokens',
  'api_call_count',
  'estimated_cost_usd',
  'actual_cost_usd',
  'cost_status',
  'cost_source',
  'billing_provider',
  'billing_base_url',
  'billing_mode',
  'pricing_version',
] as const;
const MESSAGE_COLUMNS = ['id', 'session_id', 'role', 'content', 'tool_call_id', 'tool_calls', 'tool_name', 'timestamp', 'reasoning', 'reasoning_content', 'platform_message_id', 'active', 'compacted'];
/** Bookkeeping upstream derives from other columns (counters, display order, FTS state): nothing lost. */
const DERIVED = new Set([
  'sessions.message_count',
  'sessions.tool_call_count',
  'sessions.session_key',
  'sessions.expiry_finalized',
  'sessions.last_activity_at',
  'sessions.last_read_at',
  'sessions.compression_fallback_streak',
  'sessions.compression_ineffective_count',
  'sessions.compression_overload_streak',
  'sessions.compression_failure_cooldown_until',
  'sessions.compression_recovery_deadline',
  'sessions.git_metadata_generation',
  'sessions.created_source',
  'messages.display_order',
  'messages.display_identity',
  'messages.observed',
]);
/** What every Hermes state.db has, whatever its age: without these the file is not one. */
const REQUIRED: Record<string, string[]> = { sessions: ['id', 'started_at'], messages: ['session_id', 'role', 'timestamp'] };

export async function openHermesState(path: string): Promise<HermesState> {
  const bytes = await readRegularFile(path, STATE_DB_MAX_BYTES);
  if (bytes === undefined) throw new HomeError(`${path}: not found`);
  const SQL = await initSqlJs({ locateFile: (file) => require.resolve(`sql.js/dist/${file}`) });
  const db = new SQL.Database(bytes);
  try {
    const columns = columnsOf(db, path);
    const unplaced = survey(db, path, columns);
    const prompts = columns.has('system_prompts') ? systemPrompts(db) : new Map<string, string>();
    return {
      sessions: () => readSessions(db, columns.get('sessions')!, prompts),
      messageCount: () => Number(db.exec('SELECT count(*) FROM messages')[0]?.values[0]?.[0] ?? 0),
      messages: () => readMessages(db, columns.get('messages')!),
      unplaced: () => unplaced,
      close: () => db.close(),
    };
  } catch (error) {
    db.close();
    throw error;
  }
}

/** The columns of each table the file has; refuses a file that is not a Hermes state.db, naming what is missing. */
function columnsOf(db: SqliteDatabase, path: string): Map<string, Set<string>> {
  const result = new Map<string, Set<string>>();
  let tables: string[];
  try {
    tables = (db.exec(`SELECT name FROM sqlite_master WHERE type = 'table'`)[0]?.values ?? []).map((row) => String(row[0]));
  } catch (error) {
    throw new HomeError(`${path}: not a readable SQLite database (${(error as Error).message})`);
  }
  for (const table of tables) {
    if (!/^[A-Za-z0-9_]+$/.test(table)) continue;
    const rows = db.exec(`SELECT name FROM pragma_table_info('${table}')`)[0]?.values ?? [];
    result.set(table, new Set(rows.map((row) => String(row[0]))));
  }
  for (const [table, needed] of Object.entries(REQUIRED)) {
    const has = result.get(table);
    if (has === undefined) throw new HomeError(`${path}: table ${table} is missing: is this a Hermes home?`);
    for (const column of needed) if (!has.has(column)) throw new HomeError(`${path}: table ${table} has no column ${column}`);
  }
  return result;
}

/** What every row needs, per table: the field and the SQL that finds a row without it. */
const ROW_CHECKS: Record<string, [string, string][]> = {
  sessions: [
    ['id', `id IS NULL OR id = ''`],
    ['started_at', `started_at IS NULL OR typeof(started_at) NOT IN ('integer', 'real')`],
  ],
  messages: [
    ['session_id', `session_id IS NULL`],
    ['role', `role IS NULL OR role = ''`],
    ['timestamp', `timestamp IS NULL OR typeof(timestamp) NOT IN ('integer', 'real')`],
  ],
};

/** The columns of a table the import neither reads nor upstream derives. */
function otherColumns(table: string, columns: Set<string>): string[] {
  const read: readonly string[] = table === 'sessions' ? SESSION_COLUMNS : MESSAGE_COLUMNS;
  return [...columns].filter((column) => !read.includes(column) && !DERIVED.has(`${table}.${column}`) && /^[A-Za-z0-9_]+$/.test(column));
}

/**
 * One pass per table (a million messages are read once here): rows without what every row needs
 * refuse the file before anything is written, never imported as empty or as 1970; and per column
 * Herald has no place for, how many rows hold a value.
 */
function survey(db: SqliteDatabase, path: string, columns: Map<string, Set<string>>): Record<string, number> {
  const unplaced: Record<string, number> = {};
  for (const [table, fields] of Object.entries(ROW_CHECKS)) {
    const others = otherColumns(table, columns.get(table)!);
    const parts = [
      ...fields.map(([, bad]) => `sum(CASE WHEN ${bad} THEN 1 ELSE 0 END), min(CASE WHEN ${bad} THEN rowid END)`),
      ...others.map((column) => `sum(CASE WHEN "${column}" IS NULL OR "${column}" = '' OR "${column}" = 0 THEN 0 ELSE 1 END)`),
    ];
    const row = db.exec(`SELECT ${parts.join(', ')} FROM ${table}`)[0]?.values[0] ?? [];
    fields.forEach(([field], index) => {
      const count = Number(row[index * 2] ?? 0);
      if (count > 0) throw new HomeError(`${path}: table ${table}, field ${field}: ${count} row(s) have none or a bad value (first rowid ${String(row[index * 2 + 1])})`);
    });
    others.forEach((column, index) => {
      const count = Number(row[fields.length * 2 + index] ?? 0);
      if (count > 0) unplaced[`${table}.${column}`] = count;
    });
  }
  if (columns.has('session_model_usage')) {
    const count = Number(db.exec('SELECT count(*) FROM session_model_usage')[0]?.values[0]?.[0] ?? 0);
    if (count > 0) unplaced['session_model_usage (per-model usage rows; the session totals are kept)'] = count;
  }
  return unplaced;
}

function systemPrompts(db: SqliteDatabase): Map<string, string> {
  const rows = db.exec('SELECT hash, prompt FROM system_prompts')[0]?.values ?? [];
  return new Map(rows.map((row) => [String(row[0]), text(row[1]) ?? '']));
}

function pick(columns: Set<string>, name: string, fallback = 'NULL'): string {
  return columns.has(name) ? name : `${fallback} AS ${name}`;
}

function usageOf(row: Record<string, unknown>): HermesUsage {
  const count = (key: string) => Number(row[key] ?? 0) || 0;
  const money = (key: string) => (row[key] === null || row[key] === undefined ? null : Number(row[key]));
  return {
    input_tokens: count('input_tokens'),
    output_tokens: count('output_tokens'),
    cache_read_tokens: count('cache_read_tokens'),
    cache_write_tokens: count('cache_write_tokens'),
    reasoning_tokens: count('reasoning_tokens'),
    api_call_count: count('api_call_count'),
    estimated_cost_usd: money('estimated_cost_usd'),
    actual_cost_usd: money('actual_cost_usd'),
    cost_status: text(row.cost_status),
    cost_source: text(row.cost_source),
    billing_provider: text(row.billing_provider),
    billing_base_url: text(row.billing_base_url),
    billing_mode: text(row.billing_mode),
    pricing_version: text(row.pricing_version),
  };
}

function readSessions(db: SqliteDatabase, columns: Set<string>, prompts: Map<string, string>): HermesSession[] {
  const select = SESSION_COLUMNS.map((name) => pick(columns, name)).join(', ');
  const statement = db.prepare(`SELECT ${select} FROM sessions ORDER BY started_at, id`);
  const sessions: HermesSession[] = [];
  while (statement.step()) {
    const row = statement.getAsObject();
    const hash = text(row.system_prompt_hash);
    sessions.push({
      id: String(row.id),
      source: text(row.source) ?? 'cli',
      userId: text(row.user_id),
      chatId: text(row.chat_id),
      chatType: text(row.chat_type),
      threadId: text(row.thread_id),
      // Since schema 25 the prompt sits once in system_prompts; the inline column is the older place.
      systemPrompt: (hash !== null ? prompts.get(hash) : undefined) ?? text(row.system_prompt),
      parentId: text(row.parent_session_id),
      startedAt: Number(row.started_at),
      title: text(row.title),
      model: text(row.model),
      endedAt: row.ended_at === null || row.ended_at === undefined ? null : Number(row.ended_at),
      endReason: text(row.end_reason),
      usage: usageOf(row),
    });
  }
  statement.free();
  return sessions;
}

function* readMessages(db: SqliteDatabase, columns: Set<string>): Generator<HermesMessage> {
  // Older rows kept reasoning in reasoning_content: one value per row either way.
  const reasoning = ['reasoning', 'reasoning_content'].filter((name) => columns.has(name));
  const select = ['session_id', 'role', 'content', 'tool_call_id', 'tool_calls', 'tool_name', 'timestamp']
    .map((name) => pick(columns, name))
    .concat(reasoning.length > 0 ? `coalesce(${reasoning.join(', ')}, NULL) AS reasoning` : 'NULL AS reasoning', pick(columns, 'platform_message_id'))
    .concat(pick(columns, 'active', '1'), pick(columns, 'compacted', '0'))
    .join(', ');
  const statement = db.prepare(`SELECT ${select} FROM messages ORDER BY session_id, id`);
  try {
    while (statement.step()) {
      const [sessionId, role, content, toolCallId, toolCalls, toolName, timestamp, reasoning, platformId, active, compacted] = statement.get();
      const readable = readableContent(text(content) ?? '');
      const hidden = Number(active ?? 1) === 0;
      yield {
        sessionId: String(sessionId),
        role: String(role),
        content: readable.text,
        toolCallId: text(toolCallId),
        toolCalls: text(toolCalls),
        toolName: text(toolName),
        timestamp: Number(timestamp),
        reasoning: text(reasoning),
        platformMessageId: text(platformId),
        rewound: hidden && Number(compacted ?? 0) === 0,
        archived: hidden && Number(compacted ?? 0) !== 0,
        multimodal: readable.multimodal,
      };
    }
  } finally {
    statement.free();
  }
}

function text(value: unknown): string | null {
  if (value === null || value === undefined) return null;
  if (value instanceof Uint8Array) return Buffer.from(value).toString('utf8');
  return String(value);
}
