// Loaded into every role process of the turns benchmark (NODE_OPTIONS=--import), Herald's and the
// reference pipeline's alike. node-postgres sends each client.query() as one statement and waits
// for its answer (it does not pipeline), so counting calls counts SQL statements and round trips
// without pg_stat_statements, which the shared server does not preload. On SIGUSR2 the count is
// written to $BENCH_COUNT_DIR/<pid>; the benchmark reads it before and after each point.
import { writeFileSync } from 'node:fs';
import process from 'node:process';
import { createRequire } from 'node:module';
import { join } from 'node:path';

const dir = process.env.BENCH_COUNT_DIR;
if (dir) {
  // The same CommonJS module instance the roles import (ESM imports of pg go through require's cache).
  const pg = createRequire(join(process.cwd(), 'package.json'))('pg');
  let statements = 0;
  const query = pg.Client.prototype.query;
  pg.Client.prototype.query = function countedQuery(...args) {
    statements++;
    return query.apply(this, args);
  };
  process.on('SIGUSR2', () => writeFileSync(join(dir, String(process.pid)), String(statements)));
}
