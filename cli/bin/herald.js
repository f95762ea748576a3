#!/usr/bin/env node
// The compiled CLI (npm run build): what the image and every production role run, with no loader.
// Development and tests run the TypeScript source through cli/bin/herald-dev.js instead.
try {
  await import('../dist/main.js');
} catch (error) {
  if (error?.code === 'ERR_MODULE_NOT_FOUND' && String(error.message).includes('/cli/dist/main.js')) {
    process.stderr.write('herald: not built yet: run `npm run build`, or run from source with `npm run dev -- <command>`\n');
    process.exit(1);
  }
  throw error;
}
