#!/usr/bin/env node
// Runs the CLI from its TypeScript source, with no build: tsx compiles each module as it loads, and
// the "@herald/source" export condition (a resolve hook, the same condition tsconfig.json and
// vitest.config.ts use) points every @herald/* import at its src/index.ts instead of dist/.
import './node-check.js';
import { register } from 'node:module';
import { register as registerTsx } from 'tsx/esm/api';

registerTsx();
register('./source-condition.js', import.meta.url);
await import('../src/main.ts');
