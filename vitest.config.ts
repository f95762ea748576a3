import { defaultClientConditions, defaultServerConditions } from 'vite';
import { defineConfig } from 'vitest/config';

// Tests run the TypeScript source with no build: the "@herald/source" export condition points
// every @herald/* import at its src/index.ts, as tsconfig.json and cli/bin/herald-dev.js do.
const SOURCE = '@herald/source';

export default defineConfig({
  resolve: { conditions: [SOURCE, ...defaultClientConditions] },
  ssr: { resolve: { conditions: [SOURCE, ...defaultServerConditions] } },
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
