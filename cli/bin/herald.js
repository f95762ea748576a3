#!/usr/bin/env node
// The compiled CLI (npm run build), bundled by scripts/bundle.mjs: what the image and every
// production role run, with no loader.
// Development and tests run the TypeScript source through cli/bin/herald-dev.js instead.
// No top-level await or newer syntax here: node-check.js must get to say that a Node is too old.
import './node-check.js';

import('../dist/bundle/main.js').catch(function (error) {
  if (error && error.code === 'ERR_MODULE_NOT_FOUND' && String(error.message).includes('/cli/dist/bundle/main.js')) {
    process.stderr.write('herald: not built yet: run `npm run build`, or run from source with `npm run dev -- <command>`\n');
    process.exit(1);
  }
  throw error;
});
