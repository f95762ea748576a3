// Writes libs/db/src/generated/tables.ts from a freshly migrated database: `npm run db:types`
// after adding a numbered migration. libs/db/test/generated-types.test.ts fails until it is run.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { fileURLToPath } from 'node:url';
import pg from 'pg';
import { ensureDatabase, migrate, withDefaultUser } from '@herald/db';

export const GENERATED_TYPES = fileURLToPath(new URL('../libs/db/src/generated/tables.ts', import.meta.url));
const CODEGEN = fileURLToPath(new URL('../node_modules/.bin/kysely-codegen', import.meta.url));

/** Runs kysely-codegen against `url`: writes the file, or with `verify` fails when it differs. */
export function runCodegen(url: string, verify: boolean): void {
  // Herald's tables only: pg-boss's schema (pgboss) is pg-boss's own, read through its API.
  const args = ['--dialect', 'postgres', '--url', withDefaultUser(url), '--include-pattern', 'public.*', '--exclude-pattern', 'schema_*', '--out-file', GENERATED_TYPES, '--log-level', 'error'];
  execFileSync(CODEGEN, verify ? [...args, '--verify'] : args, { stdio: 'inherit' });
}

async function main(): Promise<void> {
  const admin = process.env.HERALD_TEST_DATABASE_URL ?? 'postgres://127.0.0.1:5432/postgres';
  const url = new URL(admin);
  const name = `herald_types_${randomBytes(4).toString('hex')}`;
  url.pathname = `/${name}`;
  await ensureDatabase(url.toString());
  try {
    await migrate(url.toString());
    runCodegen(url.toString(), false);
    console.log(`wrote ${GENERATED_TYPES}`);
  } finally {
    const client = new pg.Client({ connectionString: withDefaultUser(admin) });
    await client.connect();
    await client.query(`DROP DATABASE ${pg.escapeIdentifier(name)} WITH (FORCE)`);
    await client.end();
  }
}

if (process.argv[1] === fileURLToPath(import.meta.url)) await main();
