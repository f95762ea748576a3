import { defaultServerConditions } from 'vite';
import { defineConfig } from 'vitest/config';

// Tests run the TypeScript source with no build: the "@herald/source" export condition points
// every @herald/* import at its src/index.ts, as tsconfig.json and cli/bin/herald-dev.js do.
// Vitest hands these conditions to Node as --conditions too, so leave out vite's "module": Node
// would then load bundler-only builds (@opentelemetry/api's build/esm) it cannot run.
const CONDITIONS = ['@herald/source', ...defaultServerConditions.filter((condition) => condition !== 'module')];

export default defineConfig({
  ssr: { resolve: { conditions: CONDITIONS } },
  test: {
    include: ['libs/*/test/**/*.test.ts', 'services/*/test/**/*.test.ts', 'test/**/*.test.ts'],
    // The fault tests run as their own pass (npm run test:faults, vitest.faults.config.ts).
    exclude: ['**/node_modules/**', 'test/faults/**'],
    // Each file gets its own database and queue prefix, so files may run side by side; two at a
    // time matches the two-core machines and keeps multi-process tests from starving.
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 60_000,
    allowOnly: false,
  },
});
