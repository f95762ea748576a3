import { readdirSync, readFileSync } from 'node:fs';
import { builtinModules } from 'node:module';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

// Issue 30, point 6: each workspace package.json declares what its sources import, the other
// @herald packages as "*" and outside packages at the root's exact version (the root installs them).

const ROOT = fileURLToPath(new URL('..', import.meta.url));

interface Manifest {
  name: string;
  dependencies?: Record<string, string>;
  devDependencies?: Record<string, string>;
}

function manifest(dir: string): Manifest {
  return JSON.parse(readFileSync(join(ROOT, dir, 'package.json'), 'utf8')) as Manifest;
}

function workspaces(): string[] {
  return ['libs', 'services'].flatMap((group) => readdirSync(join(ROOT, group)).map((name) => `${group}/${name}`)).concat('cli');
}

function sources(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return ['node_modules', 'dist', 'test', 'console'].includes(entry.name) ? [] : sources(path);
    return entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

/** `@scope/name/sub` and `name/sub` to the package name. */
function packageOf(specifier: string): string {
  const parts = specifier.split('/');
  return specifier.startsWith('@') ? parts.slice(0, 2).join('/') : (parts[0] ?? specifier);
}

/** The outside and @herald packages a workspace's sources import (types included). */
function importedPackages(dir: string): string[] {
  const names = new Set<string>();
  for (const file of sources(join(dir, 'src'))) {
    for (const entry of ts.preProcessFile(readFileSync(join(ROOT, file), 'utf8'), true, false).importedFiles) {
      const specifier = entry.fileName;
      if (specifier.startsWith('.') || specifier.startsWith('node:') || builtinModules.includes(packageOf(specifier))) continue;
      names.add(packageOf(specifier));
    }
  }
  names.delete(manifest(dir).name);
  return [...names].sort();
}

describe('workspace package.json files declare what they import (issue 30, point 6)', () => {
  const root = manifest('.');
  const rootVersions = { ...root.dependencies, ...root.devDependencies };

  it('finds imports to check (the check reads what it should)', () => {
    expect(importedPackages('libs/db')).toContain('kysely');
    expect(importedPackages('services/ingress')).toEqual(expect.arrayContaining(['fastify', '@herald/core']));
  });

  it.each(workspaces())('%s declares every package its sources import, at the version the root installs', (dir) => {
    const declared = manifest(dir).dependencies ?? {};
    const expected = Object.fromEntries(importedPackages(dir).map((name) => [name, name.startsWith('@herald/') ? '*' : rootVersions[name]]));
    expect(declared).toEqual(expected);
  });
});
