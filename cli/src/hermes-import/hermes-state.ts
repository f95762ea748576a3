import { readFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import initSqlJs from 'sql.js';
import type { Database as SqliteDatabase } from 'sql.js';

// Hermes keeps its sessions in $HERMES_HOME/state.db (SQLite, hermes_state.py). We read it with
// sql.js, SQLite compiled to WebAssembly: no compiler on the machine, no native addon to build.

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
  /** Hermes hides rewound messages (active = 0, compacted = 0) from replay and search. */
  rewound: boolean;
}

export interface HermesState {
  sessions(): HermesSession[];
  /** How many rows the messages table holds (rewound ones and all): what the import is about to read. */
  messageCount(): number;
  /** Every message in replay order (session, then id), one row at a time. */
  messages(): Generator<HermesMessage>;
  close(): void;
}

const require = createRequire(import.meta.url);

export async function openHermesState(path: string): Promise<HermesState> {
  const SQL = await initSqlJs({ locateFile: (file) => require.resolve(`sql.js/dist/${file}`) });
  const db = new SQL.Database(await readFile(path));
  const columns = columnsOf(db);
  return {
    sessions: () => readSessions(db, columns.get('sessions') ?? new Set()),
    messageCount: () => (columns.get('messages')?.size ? Number(db.exec('SELECT count(*) FROM messages')[0]?.values[0]?.[0] ?? 0) : 0),
    messages: () => readMessages(db, columns.get('messages') ?? new Set()),
    close: () => db.close(),
  };
}

/** Hermes adds columns release by release (SCHEMA_VERSION 21 today): read what this file has. */
function columnsOf(db: SqliteDatabase): Map<string, Set<string>> {
  const result = new Map<string, Set<string>>();
  for (const table of ['sessions', 'messages']) {
    const rows = db.exec(`SELECT name FROM pragma_table_info('${table}')`)[0]?.values ?? [];
    result.set(table, new Set(rows.map((row) => String(row[0]))));
  }
  return result;
}

function pick(columns: Set<string>, name: string, fallback = 'NULL'): string {
  return columns.has(name) ? name : `${fallback} AS ${name}`;
}

function readSessions(db: SqliteDatabase, columns: Set<string>): HermesSession[] {
  if (!columns.has('id')) throw new Error('state.db has no sessions table: is this a Hermes home?');
  const select = ['id', 'source', 'user_id', 'chat_id', 'chat_type', 'thread_id', 'system_prompt', 'parent_session_id', 'started_at', 'title']
    .map((name) => pick(columns, name))
    .join(', ');
  const statement = db.prepare(`SELECT ${select} FROM sessions ORDER BY started_at, id`);
  const sessions: HermesSession[] = [];
  while (statement.step()) {
    const row = statement.getAsObject();
    sessions.push({
      id: String(row.id),
      source: text(row.source) ?? 'cli',
      userId: text(row.user_id),
      chatId: text(row.chat_id),
      chatType: text(row.chat_type),
      threadId: text(row.thread_id),
      systemPrompt: text(row.system_prompt),
      parentId: text(row.parent_session_id),
      startedAt: Number(row.started_at ?? 0),
      title: text(row.title),
    });
  }
  statement.free();
  return sessions;
}

function* readMessages(db: SqliteDatabase, columns: Set<string>): Generator<HermesMessage> {
  const select = ['session_id', 'role', 'content', 'tool_call_id', 'tool_calls', 'tool_name', 'timestamp']
    .map((name) => pick(columns, name))
    .concat(pick(columns, 'active', '1'), pick(columns, 'compacted', '0'))
    .join(', ');
  const statement = db.prepare(`SELECT ${select} FROM messages ORDER BY session_id, id`);
  try {
    while (statement.step()) {
      const [sessionId, role, content, toolCallId, toolCalls, toolName, timestamp, active, compacted] = statement.get();
      yield {
        sessionId: String(sessionId),
        role: String(role),
        content: text(content) ?? '',
        toolCallId: text(toolCallId),
        toolCalls: text(toolCalls),
        toolName: text(toolName),
        timestamp: Number(timestamp ?? 0),
        rewound: Number(active ?? 1) === 0 && Number(compacted ?? 0) === 0,
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
