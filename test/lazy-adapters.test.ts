import { spawnSync } from 'node:child_process';
import { describe, expect, it } from 'vitest';
import { HERALD_BIN } from './support/stack.ts';

// On exit, the packages whose CommonJS modules the process loaded (ESM imports of a CommonJS
// package go through require's cache too), one per line on stderr.
const REPORT = `data:text/javascript,${encodeURIComponent(`
import { createRequire } from 'node:module';
const require = createRequire(process.cwd() + '/package.json');
process.on('exit', () => {
  const names = new Set(Object.keys(require.cache).map((file) => /node_modules\\/((?:@[^/]+\\/)?[^/]+)/.exec(file)?.[1]).filter(Boolean));
  process.stderr.write('LOADED ' + [...names].join(' ') + '\\n');
});`)}`;

function loadedBy(args: string[], env: Record<string, string> = {}): string[] {
  const run = spawnSync(process.execPath, ['--import', REPORT, HERALD_BIN, ...args], {
    env: { ...process.env, DATABASE_URL: 'postgres://127.0.0.1:1/none', ...env },
    encoding: 'utf8',
    timeout: 120_000,
  });
  const line = run.stderr.split('\n').find((l) => l.startsWith('LOADED '));
  if (!line) throw new Error(`no module report: ${run.stderr.slice(-2000)}`);
  return line.slice('LOADED '.length).split(' ');
}

describe('what a process loads at start', () => {
  it('leaves discord.js, grammy and the Anthropic SDK unloaded without a platform or an Anthropic model', () => {
    // `herald help` imports the whole CLI, every role's wiring included, as a role process does.
    const loaded = loadedBy(['help'], { HERALD_MODEL: 'openai/gpt-test', OPENAI_API_KEY: 'sk-test' });
    expect(loaded).toContain('pg');
    expect(loaded).not.toContain('discord.js');
    expect(loaded).not.toContain('grammy');
    expect(loaded).not.toContain('@anthropic-ai/sdk');
  }, 150_000);
});
