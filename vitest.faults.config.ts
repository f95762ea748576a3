import { defineConfig } from 'vitest/config';
import base from './vitest.config.ts';

// `npm run test:faults`: the fault tests (docs/guarantees.md, "Faults"), one file at a time: each
// owns a Postgres or a Redis, restarts processes and times recoveries on a shared machine.
export default defineConfig({
  ...base,
  test: { ...base.test, include: ['test/faults/**/*.test.ts'], exclude: ['**/node_modules/**'], maxWorkers: 1 },
});
