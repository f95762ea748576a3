import { rm } from 'node:fs/promises';
import { loadConfig } from '@herald/core';
import { importHermesHome } from '../cli/src/import-command.ts';
import { addMessages, addSessions, newHermesDb, writeHermesHome } from '../test/support/hermes-home.ts';
import type { HermesMessageSeed } from '../test/support/hermes-home.ts';
import { createTestDatabase } from '../test/support/test-database.ts';
import { table } from './machine.ts';

export interface ImportBenchResult {
  messages: number;
  sessions: number;
  buildSeconds: number;
  importSeconds: number;
  againSeconds: number;
  searchable: boolean;
}

const WORDS = ['deploy', 'rollback', 'kubernetes', 'invoice', 'marigold', 'latency', 'postgres', 'budget', 'review', 'incident'];

function* corpus(sessions: number, perSession: number, t0: number): Generator<HermesMessageSeed> {
  for (let s = 0; s < sessions; s++) {
    for (let m = 0; m < perSession; m++) {
      const word = WORDS[(s * 7 + m) % WORDS.length]!;
      yield { sessionId: `s${s}`, role: m % 2 === 0 ? 'user' : 'assistant', content: `message ${m} of session ${s} about the ${word} plan`, timestamp: t0 + s * 3600 + m };
    }
  }
}

/** A Hermes home of `messages` messages (50 per session) imported into a fresh database, twice. */
export async function runImportBench(messages: number, progress: (message: string) => void): Promise<ImportBenchResult> {
  const perSession = 50;
  const sessions = Math.ceil(messages / perSession);
  const t0 = Date.parse('2026-01-01T00:00:00Z') / 1000;
  progress(`building a Hermes state.db with ${messages.toLocaleString('en')} messages`);
  let started = performance.now();
  const sqlite = await newHermesDb();
  addSessions(
    sqlite,
    Array.from({ length: sessions }, (_, s) => ({ id: `s${s}`, source: 'telegram', userId: '42', startedAt: t0 + s * 3600 })),
  );
  addMessages(sqlite, corpus(sessions, perSession, t0));
  const home = await writeHermesHome(sqlite);
  sqlite.close();
  const buildSeconds = (performance.now() - started) / 1000;
  const database = await createTestDatabase();
  try {
    const config = { ...loadConfig({ DATABASE_URL: database.url }) };
    const target = { profileId: 'main', userId: 'bench', timezone: 'UTC' };
    progress('importing');
    started = performance.now();
    const first = await importHermesHome(config, home, target);
    const importSeconds = (performance.now() - started) / 1000;
    progress('importing again (nothing to do)');
    started = performance.now();
    await importHermesHome(config, home, target);
    const againSeconds = (performance.now() - started) / 1000;
    const hit = await database.db
      .selectFrom('messages')
      .select('id')
      .where('search_vector', '@@', (eb) => eb.fn('websearch_to_tsquery', [eb.val('english'), eb.val('marigold')]))
      .limit(1)
      .execute();
    return { messages: first.history?.messages.imported ?? 0, sessions, buildSeconds, importSeconds, againSeconds, searchable: hit.length > 0 };
  } finally {
    await database.drop();
    await rm(home, { recursive: true, force: true });
  }
}

export function printImportBench(result: ImportBenchResult): void {
  console.log('\n## Importing a Hermes home\n');
  console.log(
    '`herald import hermes`: state.db read with sql.js (WASM), messages COPYed straight into messages with the scope of their sessions, search indexes built once after the rows when the import outgrows the table (docs/decisions/2026-12-02-import-speed.md). Target: 1,000,000 messages in < 60 s, idempotent, searchable at once.\n',
  );
  console.log(
    table(
      ['messages', 'sessions', 'build state.db s', 'import s', 'messages/s', 'second import s', 'searchable at once'],
      [
        [
          result.messages,
          result.sessions,
          result.buildSeconds.toFixed(1),
          result.importSeconds.toFixed(1),
          Math.round(result.messages / result.importSeconds),
          result.againSeconds.toFixed(1),
          result.searchable ? 'yes' : 'no',
        ],
      ],
    ),
  );
}
