import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { loadConfig } from '@herald/core';

// The docs are a map of the code; these checks make a moved file, a renamed test or a dropped
// page fail here instead of misleading the next reader.

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const README_LIMIT = 12_000;

/** Top-level folders and files a backticked path may name; anything else in backticks is not a path. */
const REPO_DIRS = ['.ci', 'bench', 'cli', 'deploy', 'docs', 'libs', 'migrations', 'scripts', 'services', 'test'];
const REPO_FILES = ['package.json', 'package-lock.json', 'tsconfig.json', 'eslint.config.js', 'vitest.config.ts', 'Dockerfile', 'README.md'];

function read(path: string): string {
  return readFileSync(join(ROOT, path), 'utf8');
}

/** README.md and every page directly under docs/, as repository-relative paths. */
function pages(): string[] {
  const docs = readdirSync(join(ROOT, 'docs'))
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`);
  return ['README.md', ...docs.sort()];
}

/** The text outside fenced code blocks: diagrams and shell examples are not links. */
function prose(markdown: string): string {
  return markdown.replace(/^```[^\n]*\n[\s\S]*?^```\s*$/gm, '');
}

function inlineCode(markdown: string): string[] {
  return [...prose(markdown).matchAll(/`([^`\n]+)`/g)].map((match) => match[1] ?? '');
}

/** Markdown links outside code: `[text](target)`, minus external ones. */
function relativeLinks(markdown: string): string[] {
  const text = prose(markdown).replace(/`[^`\n]+`/g, '');
  return [...text.matchAll(/\]\(([^)\s]+)\)/g)].map((match) => match[1] ?? '').filter((target) => !/^[a-z][a-z0-9+.-]*:/i.test(target));
}

/** GitHub's heading anchors: lower case, punctuation dropped, each space a hyphen. */
function anchors(markdown: string): Set<string> {
  const seen = new Map<string, number>();
  const result = new Set<string>();
  for (const match of prose(markdown).matchAll(/^#{1,6}\s+(.+)$/gm)) {
    const base = (match[1] ?? '')
      .trim()
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/\s/g, '-');
    const count = seen.get(base) ?? 0;
    seen.set(base, count + 1);
    result.add(count === 0 ? base : `${base}-${count}`);
  }
  return result;
}

/** A backticked repository path: starts at a known top-level entry, no placeholders or globs. */
function repositoryPath(code: string): string | undefined {
  const path = code.replace(/:\d+$/, '').replace(/\/$/, '');
  if (/[<>*{}\s]/.test(path) || path.includes('NNNN')) return undefined;
  if (REPO_FILES.includes(path)) return path;
  const top = path.split('/')[0] ?? '';
  return path.includes('/') && REPO_DIRS.includes(top) ? path : undefined;
}

/** Everything a doc may name as code: the sources, the SQL, the scripts and the package manifest. */
function sourceText(): string {
  const roots = ['libs', 'services', 'cli', 'migrations', 'test', 'bench', 'scripts', 'deploy'];
  const files = roots.flatMap((root) =>
    existsSync(join(ROOT, root))
      ? readdirSync(join(ROOT, root), { recursive: true, encoding: 'utf8' })
          .filter((name) => /\.(ts|js|sql|ya?ml|json)$/.test(name) && !name.includes('node_modules') && !name.split('/').includes('dist'))
          .map((name) => `${root}/${name}`)
      : [],
  );
  return [...files, 'package.json', 'eslint.config.js', 'Dockerfile'].map(read).join('\n');
}

/**
 * Names that can only be code: camelCase, PascalCase with an inner capital, herald_* SQL functions
 * and UPPER_SNAKE constants or variables. Plain words and lower-case names are left alone.
 */
const CODE_NAME = /^(?:[a-z]+[A-Z][A-Za-z0-9]*|[A-Z][a-z0-9]+[A-Z][A-Za-z0-9]*|herald_[a-z_]+|[A-Z][A-Z0-9]*_[A-Z0-9_]+)$/;

/** The code names in inline code and in fenced blocks (diagrams name functions and tables too). */
function codeNames(markdown: string): string[] {
  const blocks = [...markdown.matchAll(/^```[^\n]*\n([\s\S]*?)^```\s*$/gm)].map((match) => match[1] ?? '');
  const code = [...blocks, ...inlineCode(markdown)].join('\n');
  return [...code.matchAll(/[A-Za-z_][A-Za-z0-9_]*/g)].map((match) => match[0]).filter((word) => CODE_NAME.test(word));
}

/** `test/x.test.ts` "title", "title": a cited test and the titles it is cited with. */
function citedTests(markdown: string): { file: string; title: string }[] {
  const cited: { file: string; title: string }[] = [];
  for (const match of prose(markdown).matchAll(/`([^`\s]+\.test\.ts)`((?:\s*(?:,|;|and)?\s*"[^"\n]+")+)/g)) {
    for (const title of (match[2] ?? '').matchAll(/"([^"\n]+)"/g)) cited.push({ file: match[1] ?? '', title: title[1] ?? '' });
  }
  return cited;
}

describe('the docs match the repository', () => {
  it(`keeps README.md under ${README_LIMIT} characters`, () => {
    expect(read('README.md').length).toBeLessThan(README_LIMIT);
  });

  it('links only to files and headings that exist', () => {
    const broken: string[] = [];
    for (const page of pages()) {
      const markdown = read(page);
      for (const link of relativeLinks(markdown)) {
        const [target = '', anchor] = link.split('#');
        const file = target === '' ? page : relative(ROOT, join(ROOT, dirname(page), decodeURIComponent(target)));
        if (!existsSync(join(ROOT, file))) {
          broken.push(`${page}: ${link} (no ${file})`);
          continue;
        }
        if (anchor !== undefined && file.endsWith('.md') && !anchors(read(file)).has(anchor)) {
          broken.push(`${page}: ${link} (no heading #${anchor} in ${file})`);
        }
      }
    }
    expect(broken).toEqual([]);
  });

  it('names only repository paths that exist', () => {
    const missing: string[] = [];
    for (const page of pages()) {
      for (const code of inlineCode(read(page))) {
        const path = repositoryPath(code);
        if (path !== undefined && !existsSync(join(ROOT, path))) missing.push(`${page}: \`${code}\``);
      }
    }
    expect(missing).toEqual([]);
  });

  it('names only functions, types, constants and variables that exist in the code', () => {
    const source = sourceText();
    const unknown: string[] = [];
    for (const page of pages()) {
      for (const name of new Set(codeNames(read(page)))) if (!source.includes(name)) unknown.push(`${page}: ${name}`);
    }
    expect(unknown).toEqual([]);
  });

  it('cites only test titles that exist in the files it names', () => {
    const gone: string[] = [];
    let count = 0;
    for (const page of pages()) {
      for (const { file, title } of citedTests(read(page))) {
        count++;
        if (!existsSync(join(ROOT, file)) || !read(file).includes(title)) gone.push(`${page}: ${file} "${title}"`);
      }
    }
    expect(gone).toEqual([]);
    // The architecture page cites the tests of every invariant; finding none means the pattern broke.
    expect(count).toBeGreaterThan(20);
  });

  it('has a row in docs/configuration.md for every variable the config reads', () => {
    // The config asks the environment for each variable it knows; a recording proxy lists them.
    const read = new Set<string>();
    loadConfig(
      new Proxy({} as Record<string, string | undefined>, {
        get: (_target, key) => {
          if (typeof key === 'string') read.add(key);
          return undefined;
        },
      }),
    );
    const page = readFileSync(join(ROOT, 'docs/configuration.md'), 'utf8');
    const missing = [...read].filter((name) => !page.includes(`| \`${name}\` |`));
    expect(read.size).toBeGreaterThan(40);
    expect(missing).toEqual([]);
  });

  it('has a row for every lib and service in docs/architecture.md', () => {
    const map = read('docs/architecture.md');
    const packages = ['libs', 'services'].flatMap((dir) => readdirSync(join(ROOT, dir)).map((name) => `${dir}/${name}`));
    expect(packages.filter((path) => !map.includes(`\`${path}\``))).toEqual([]);
  });

  it('lists every docs page and decision in docs/README.md', () => {
    const index = read('docs/README.md');
    const linked = new Set(relativeLinks(index).map((link) => link.split('#')[0]));
    const decisions = readdirSync(join(ROOT, 'docs/decisions')).map((name) => `decisions/${name}`);
    const docs = pages()
      .filter((page) => page !== 'README.md' && page !== 'docs/README.md')
      .map((page) => page.slice('docs/'.length));
    expect([...docs, ...decisions].filter((page) => !linked.has(page))).toEqual([]);
  });
});
