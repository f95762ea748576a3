import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';
import { CHAT_PLATFORMS } from '@herald/core';

// Issue 30, point 1: a platform is one folder behind one contract. Outside the platform folders and
// the registry, no source file names a platform as an identifier or a string (comments may).

const ROOT = fileURLToPath(new URL('..', import.meta.url));
/** The platforms of today and the next one announced: naming Slack is as much a leak as Telegram. */
const NAMES = new RegExp([...CHAT_PLATFORMS, 'slack'].join('|'), 'i');

const ALLOWED = [
  // The folders of the platforms themselves and the registry of their adapters.
  /^libs\/platforms\/src\/(telegram|discord|slack)\//,
  /^libs\/platforms\/src\/platform-adapters\.ts$/,
  // The one registry of names and facts, below every lib that routes by platform.
  /^libs\/core\/src\/platform-registry\.ts$/,
  // Config parsing: the TELEGRAM_* and DISCORD_* settings are read where all settings are (libs never read process.env).
  /^libs\/core\/src\/config\/platforms\.ts$/,
];

function sourceFiles(dir: string): string[] {
  return readdirSync(join(ROOT, dir), { withFileTypes: true }).flatMap((entry) => {
    const path = join(dir, entry.name);
    if (entry.isDirectory()) return entry.name === 'node_modules' || entry.name === 'dist' || entry.name === 'test' ? [] : sourceFiles(path);
    return /\.(ts|sql)$/.test(entry.name) && !entry.name.endsWith('.test.ts') ? [path] : [];
  });
}

/** The identifiers and string literals of a TypeScript file, from its syntax tree (comments are not in it). */
function tsNames(path: string, text: string): string[] {
  const names: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isIdentifier(node) || ts.isPrivateIdentifier(node)) names.push(node.text);
    else if (ts.isStringLiteralLike(node) || ts.isTemplateLiteralToken(node)) names.push(node.text);
    ts.forEachChild(node, visit);
  };
  visit(ts.createSourceFile(path, text, ts.ScriptTarget.Latest, false, ts.ScriptKind.TS));
  return names;
}

/** SQL outside `--` comments. */
function sqlCode(text: string): string[] {
  return text.split('\n').map((line) => line.replace(/--.*$/, ''));
}

function namesAPlatform(path: string): boolean {
  const text = readFileSync(join(ROOT, path), 'utf8');
  const parts = path.endsWith('.sql') ? sqlCode(text) : tsNames(path, text);
  return parts.some((part) => NAMES.test(part));
}

describe('platform names stay in the platform folders and the registry (issue 30, point 1)', () => {
  const files = ['libs', 'services', 'cli/src', 'migrations/functions'].flatMap(sourceFiles).map((path) => relative(ROOT, join(ROOT, path)));
  const naming = files.filter((path) => !ALLOWED.some((rule) => rule.test(path))).filter(namesAPlatform);

  it('finds platform names where they are allowed (the check reads what it should)', () => {
    expect(namesAPlatform('libs/core/src/platform-registry.ts')).toBe(true);
    expect(namesAPlatform('libs/platforms/src/telegram/telegram-adapter.ts')).toBe(true);
    expect(files.length).toBeGreaterThan(200);
  });

  it('names no platform in any other source file', () => {
    expect(naming).toEqual([]);
  });
});
