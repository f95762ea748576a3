import { mkdirSync } from 'node:fs';
import { basename, dirname, join } from 'node:path';
import { build } from 'esbuild';

/**
 * A TypeScript plugin file compiled to JavaScript beside it (in a .built/ folder), for the compiled
 * CLI, which loads plugins with plain Node as an operator's deployment does. Packages stay imports:
 * they resolve from the repository's node_modules (the @herald/* ones to their dist/).
 */
export async function compiledPlugin(source: string): Promise<string> {
  const dir = join(dirname(source), '.built');
  mkdirSync(dir, { recursive: true });
  const outfile = join(dir, `${basename(source, '.ts')}-${process.pid}.mjs`);
  await build({ entryPoints: [source], outfile, bundle: true, packages: 'external', format: 'esm', platform: 'node', target: 'node20', logLevel: 'warning' });
  return outfile;
}
