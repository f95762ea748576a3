// Loaded into every role process of the turns benchmark (NODE_OPTIONS=--import), Herald's and the
// reference pipeline's alike. node-postgres sends each client.query() as one statement and waits
// for its answer (it does not pipeline), so counting calls counts SQL statements and round trips
// without pg_stat_statements, which the shared server does not preload. On SIGUSR2 the count is
// written to $BENCH_COUNT_DIR/<pid>; the benchmark reads it before and after each point. With
// BENCH_SQL_TEXT=1 each statement's first 120 characters are tallied too, written to <pid>.sql.json:
// how the round trips per turn in docs/benchmarks.md were attributed.
import { writeFileSync } from 'node:fs';
import process from 'node:process';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const dir = process.env.BENCH_COUNT_DIR;
if (dir) {
  // The same CommonJS module instance the roles import (ESM imports of pg go through require's cache).
  const pg = createRequire(join(process.cwd(), 'package.json'))('pg');
  const byText = process.env.BENCH_SQL_TEXT === '1' ? new Map() : undefined;
  let statements = 0;
  const query = pg.Client.prototype.query;
  pg.Client.prototype.query = function countedQuery(...args) {
    statements++;
    if (byText) {
      const first = args[0];
      const text = String(typeof first === 'string' ? first : (first?.text ?? first?.constructor?.name))
        .replace(/\s+/g, ' ')
        .slice(0, 120);
      byText.set(text, (byText.get(text) ?? 0) + 1);
    }
    return query.apply(this, args);
  };
  process.on('SIGUSR2', () => {
    writeFileSync(join(dir, String(process.pid)), String(statements));
    if (byText) writeFileSync(join(dir, `${process.pid}.sql.json`), JSON.stringify(Object.fromEntries([...byText].sort((a, b) => b[1] - a[1])), null, 1));
  });
}
