import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

// Issue 30, point 2: every table has one owning lib, and only that lib queries it; services and the
// CLI call the owner's functions. Migrations (and the SQL functions beside them) are excepted: they are
// the schema itself. docs/decisions/2026-12-06-table-ownership.md says why and how a table moves.

const ROOT = fileURLToPath(new URL('..', import.meta.url));

/** Each table's owning package, by folder. */
export const TABLE_OWNERS: Record<string, string> = {
  profiles: 'libs/profiles',
  bindings: 'libs/profiles',
  profile_documents: 'libs/profiles',
  profile_hooks: 'libs/hooks',
  hook_firings: 'libs/hooks',
  hook_events: 'libs/hooks',
  profile_mcp_servers: 'libs/mcp',
  session_mcp_tools: 'libs/mcp',
  sessions: 'libs/session',
  session_routes: 'libs/session',
  inbound_events: 'libs/session',
  turns: 'libs/session',
  messages: 'libs/transcript',
  model_calls: 'libs/session',
  session_leases: 'libs/leases',
  session_todos: 'libs/session',
  tool_waits: 'libs/waits',
  session_approvals: 'libs/waits',
  tool_refusals: 'libs/waits',
  session_compressions: 'libs/lineage',
  session_handoffs: 'libs/handoff',
  home_chats: 'libs/handoff',
  dead_letters: 'libs/session',
  subagent_runs: 'libs/subagents',
  usage_days: 'libs/limits',
  platform_leases: 'libs/leases',
  memory_entries: 'libs/knowledge',
  skill_blobs: 'libs/knowledge',
  skills: 'libs/knowledge',
  skill_versions: 'libs/knowledge',
  reviews: 'libs/knowledge',
  review_counters: 'libs/knowledge',
  cron_clock: 'libs/cron',
  cron_jobs: 'libs/cron',
  cron_runs: 'libs/cron',
  outbox: 'libs/delivery',
  chat_drafts: 'libs/delivery',
  blobs: 'libs/attachments',
  event_attachments: 'libs/attachments',
  audit_log: 'libs/audit',
  turn_stream_entries: 'libs/queue',
  usage_costs: 'libs/limits',
  budgets: 'libs/limits',
  budget_warnings: 'libs/limits',
  provider_cooldowns: 'libs/agent',
  people: 'libs/people',
  person_identities: 'libs/people',
  role_grants: 'libs/people',
  api_tokens: 'libs/people',
  link_codes: 'libs/people',
  console_sessions: 'libs/people',
};

/**
 * Reads by a package other than the owner, each with its reason. History search is one query over
 * messages joined to their sessions and profiles: the search lib owns that query (and the search
 * columns' index), while every write stays with the owner.
 */
const DECLARED_READERS: Record<string, string[]> = {
  'libs/search': ['messages', 'sessions', 'profiles', 'inbound_events'],
  // Pruning keeps a blob while an outbox row or a cron run still carries it (a file not delivered
  // yet); a session's files are those its messages brought and its deliveries sent.
  'libs/attachments': ['outbox', 'cron_runs', 'inbound_events'],
  // A send_file call finds its scheduled run through the event its turn answers; a target rule
  // reads the chats a person wrote in; a run's finish reads its event's reply and end in the join
  // that locks the run (and the sweep finds the runs whose event ended without one).
  'libs/cron': ['inbound_events'],
  // The process's profile cache sits under every lib (each reads a profile's settings and hooks
  // through it, LISTENing for changes), so it reads the rows itself; the owners write them.
  'libs/db': ['profiles', 'profile_hooks'],
  // Beside libs/profiles in the layers, so it cannot call it: a profile's memory limits and sharing,
  // its context documents for the prompt, its skill-sharing switch, and the profiles to seed skills in.
  'libs/knowledge': ['profiles', 'profile_documents'],
  // A lease claim reads the profile's identity and tool policy in its one round trip (the same join
  // that bumps the wake generation and opens the inbox).
  'libs/leases': ['profiles'],
  // session_search's scroll, read and browse: one query each over messages under the search lib's
  // visibility predicate (messageVisible), as the history search itself.
  'libs/tools': ['messages'],
};

/**
 * libs/session was split along its seams (issue 30, point 3) into libs that still share the
 * session's rows: each writes its own tables and works on the session's (sessions, inbound_events,
 * turns, messages) and its siblings' in the same transaction, as before the split. Their uses of each
 * other's tables, by package: a use that moves behind the owner's functions leaves the list.
 */
const SESSION_FAMILY_SHARES: Record<string, string[]> = {
  'libs/session': ['budget_warnings', 'messages', 'session_compressions', 'subagent_runs', 'tool_waits'],
  'libs/inbox': ['inbound_events', 'session_routes', 'sessions', 'tool_waits', 'turns'],
  'libs/lineage': ['inbound_events', 'session_approvals', 'session_routes', 'session_todos', 'sessions', 'tool_waits', 'turns'],
  'libs/handoff': ['inbound_events', 'messages', 'session_routes', 'session_todos', 'sessions', 'turns'],
  'libs/waits': ['sessions'],
  'libs/limits': ['model_calls', 'sessions'],
  'libs/subagents': ['inbound_events', 'sessions'],
  'libs/leases': ['inbound_events', 'sessions', 'turns'],
  'libs/transcript': ['model_calls', 'sessions'],
};

/**
 * `file: table` pairs that still query a table they do not own, each to move behind the owner's
 * functions, each with the reason it has not yet. The list may only shrink: a pair that no longer
 * holds must leave it.
 */
const NOT_YET_MOVED: string[] = [];

const BUILDER_METHODS = new Set(['selectFrom', 'insertInto', 'updateTable', 'deleteFrom', 'innerJoin', 'leftJoin', 'rightJoin', 'fullJoin', 'mergeInto', 'replaceInto']);
const SQL_TABLE = /\b(?:from|join|into|update|table)\s+(?:only\s+)?"?([a-z_][a-z0-9_]*)/gi;

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return ['node_modules', 'dist', 'test', 'console'].includes(entry.name) ? [] : sourceFiles(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

/** The tables a TypeScript file queries: kysely builder arguments, and table names after SQL keywords in its strings. */
export function tablesQueried(path: string, text: string): Set<string> {
  const found = new Set<string>();
  const fromSql = (chunk: string) => {
    for (const match of chunk.matchAll(SQL_TABLE)) if (match[1]!.toLowerCase() in TABLE_OWNERS) found.add(match[1]!.toLowerCase());
  };
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression) && BUILDER_METHODS.has(node.expression.name.text)) {
      const first = node.arguments[0];
      const table = first && ts.isStringLiteralLike(first) ? first.text.split(/\s+/)[0]! : undefined;
      if (table !== undefined && table in TABLE_OWNERS) found.add(table);
    }
    if (ts.isStringLiteralLike(node) || ts.isTemplateLiteralToken(node)) fromSql(node.text);
    ts.forEachChild(node, visit);
  };
  visit(ts.createSourceFile(path, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS));
  return found;
}

/**
 * Files whose SQL is not Herald's: the Hermes importer reads Hermes' own SQLite state database, and the
 * exporter writes one, whose tables happen to be called sessions and messages too.
 */
const OTHER_DATABASES = ['cli/src/hermes-import/hermes-layout.ts', 'cli/src/hermes-import/hermes-state.ts', 'cli/src/hermes-export/hermes-state-writer.ts'];

/** A file's string and template literals, joined: its SQL, without its comments. */
function sqlText(text: string): string {
  const chunks: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isStringLiteralLike(node) || ts.isTemplateLiteralToken(node)) chunks.push(node.text);
    ts.forEachChild(node, visit);
  };
  visit(ts.createSourceFile('file.ts', text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS));
  return chunks.join('\n');
}

function packageOf(path: string): string {
  return path.startsWith('cli/') ? 'cli' : path.split('/').slice(0, 2).join('/');
}

function outsideOwner(): string[] {
  const files = ['libs', 'services', 'cli/src'].flatMap(sourceFiles).filter((path) => !OTHER_DATABASES.includes(path));
  return files.flatMap((path) => {
    const pkg = packageOf(path);
    const tables = [...tablesQueried(path, readFileSync(join(ROOT, path), 'utf8'))];
    return tables.filter((table) => TABLE_OWNERS[table] !== pkg && !DECLARED_READERS[pkg]?.includes(table) && !SESSION_FAMILY_SHARES[pkg]?.includes(table)).map((table) => `${path}: ${table}`);
  });
}

function databaseTables(): string[] {
  const schema = readFileSync(join(ROOT, 'libs/db/src/schema.ts'), 'utf8');
  const body = /export interface Database \{([\s\S]*?)\n\}/.exec(schema)![1]!;
  return [...body.matchAll(/^\s+([a-z_]+):/gm)].map((match) => match[1]!);
}

describe('every table has one owner and only the owner queries it (issue 30, point 2)', () => {
  it('names an owner for every table of the schema, and only tables that exist', () => {
    expect(databaseTables().filter((table) => !(table in TABLE_OWNERS))).toEqual([]);
    expect(Object.keys(TABLE_OWNERS).filter((table) => !databaseTables().includes(table))).toEqual([]);
  });

  it('reads table names from builder calls and SQL strings (the check reads what it should)', () => {
    const sample = "db.selectFrom('sessions as s').innerJoin('turns', 'a', 'b'); sql`UPDATE outbox SET x = 1`; const s = 'from skills';";
    expect([...tablesQueried('sample.ts', sample)].sort()).toEqual(['outbox', 'sessions', 'skills', 'turns']);
    expect([...tablesQueried('sample.ts', '// select from sessions\nconst note = "sessions";')]).toEqual([]);
  });

  it('queries no table outside its owner beyond the pairs still to move, and that list only shrinks', () => {
    const found = outsideOwner();
    expect(found.filter((pair) => !NOT_YET_MOVED.includes(pair))).toEqual([]);
    expect(NOT_YET_MOVED.filter((pair) => !found.includes(pair))).toEqual([]);
  });

  it("calls herald_accept_message from one function only, the inbox lib's callAcceptMessage", () => {
    const callers = ['libs', 'services', 'cli/src'].flatMap(sourceFiles).filter((path) => /herald_accept_message\s*\(/.test(sqlText(readFileSync(join(ROOT, path), 'utf8'))));
    expect(callers).toEqual(['libs/inbox/src/accept-call.ts']);
  });
});
