import { createRequire } from 'node:module';
import initSqlJs from 'sql.js';
import type { Db } from '@herald/db';
import { messagesForExport, sessionsForExport } from '@herald/session';
import { HERMES_SCHEMA_30 } from '../hermes-import/hermes-layout.ts';
import { writeMessages, writeSessions } from './hermes-state-writer.ts';

// A person's sessions as a Hermes state.db in upstream's current layout. A session that came from
// Hermes goes back under its Hermes id (its session_key says which), so export then import lands
// on the same Herald ids; Herald's own sessions go under their Herald id.

const require = createRequire(import.meta.url);

export interface StateExport {
  sessions: number;
  messages: number;
  bytes: Uint8Array;
}

/** The person's sessions of the profile, with their messages, as a state.db file's bytes. */
export async function exportState(db: Db, profileId: string, userId: string): Promise<StateExport> {
  const SQL = await initSqlJs({ locateFile: (file) => require.resolve(`sql.js/dist/${file}`) });
  const sqlite = new SQL.Database();
  try {
    sqlite.exec(HERMES_SCHEMA_30);
    const rows = await sessionsForExport(db, profileId, userId);
    const ids = writeSessions(sqlite, rows);
    const messages = await writeMessages(sqlite, ids, (id) => messagesForExport(db, id));
    return { sessions: rows.length, messages, bytes: sqlite.export() };
  } finally {
    sqlite.close();
  }
}
