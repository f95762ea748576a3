import { defineConfig } from 'vitest/config';

export default defineConfig({
  test: {
    include: ['libs/*/test/**/*.test.ts', 'services/*/test/**/*.test.ts', 'test/**/*.test.ts'],
    // Each file gets its own database and queue prefix, so files may run side by side; two at a
    // time matches the two-core machines and keeps multi-process tests from starving.
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 60_000,
    allowOnly: false,
  },
});
