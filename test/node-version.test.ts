import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { HERALD_BUILT_BIN, HERALD_SOURCE_BIN } from './support/stack.ts';

/** Runs an entry point under a Node that reports `version`, before any of Herald's modules load. */
function runAs(version: string, bin: string) {
  const pretend = `Object.defineProperty(process, 'versions', { value: { ...process.versions, node: '${version}' } });`;
  return spawnSync(process.execPath, ['--import', `data:text/javascript,${encodeURIComponent(pretend)}`, bin, 'help'], { encoding: 'utf8' });
}

describe('the supported Node versions', () => {
  it.each([['18.20.4'], ['20.18.1'], ['21.7.3'], ['22.11.0']])('refuses Node %s at start with one clear line', (version) => {
    for (const bin of [HERALD_SOURCE_BIN, HERALD_BUILT_BIN]) {
      const result = runAs(version, bin);
      expect(result.status).toBe(1);
      expect(result.stderr).toBe(`herald: Node ${version} is not supported: Herald needs Node 20.19 or a later 20.x, or Node 22.12 or later (see https://nodejs.org)\n`);
    }
  });

  it('starts on the Node it runs on here (within engines)', () => {
    const result = runAs(process.versions.node, HERALD_SOURCE_BIN);
    expect(result.status).toBe(0);
    expect(result.stdout).toMatch(/^usage: herald <command>/);
  });

  it('says the same in engines, the image and the README', () => {
    const pkg = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8')) as { engines: { node: string } };
    expect(pkg.engines.node).toBe('^20.19.0 || >=22.12.0');
    expect(readFileSync(new URL('../Dockerfile', import.meta.url), 'utf8')).toMatch(/^FROM node:22-/m);
    expect(readFileSync(new URL('../README.md', import.meta.url), 'utf8')).toContain('Node.js 20.19+ (20.x) or 22.12+');
  });
});
