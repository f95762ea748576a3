import { readFileSync } from 'node:fs';
import { relative } from 'node:path';
import { fileURLToPath } from 'node:url';
import ts from 'typescript';
import { describe, expect, it } from 'vitest';

// Issue 30, point 6: no import cycle anywhere in the tree. Modules are resolved by TypeScript
// itself with the repository's tsconfig.json (the @herald/source condition maps every @herald/*
// import to its src/index.ts, as the typecheck does), type-only imports included: a cycle of types
// is still two modules that cannot be read one without the other.

const ROOT = fileURLToPath(new URL('..', import.meta.url));

function program(): { files: string[]; options: ts.CompilerOptions } {
  const config = ts.readConfigFile(`${ROOT}tsconfig.json`, (path) => ts.sys.readFile(path));
  const parsed = ts.parseJsonConfigFileContent(config.config, ts.sys, ROOT);
  return { files: parsed.fileNames.filter((file) => !/\/(test|bench|scripts)\//.test(file) && !file.endsWith('.test.ts')), options: parsed.options };
}

/** Each source file's imports (and re-exports) of other source files of the tree. */
function importGraph(): Map<string, string[]> {
  const { files, options } = program();
  const inTree = new Set(files);
  const graph = new Map<string, string[]>();
  for (const file of files) {
    const info = ts.preProcessFile(readFileSync(file, 'utf8'), true, false);
    const targets = info.importedFiles
      .map((entry) => ts.resolveModuleName(entry.fileName, file, options, ts.sys).resolvedModule?.resolvedFileName)
      .filter((target): target is string => target !== undefined && inTree.has(target));
    graph.set(file, [...new Set(targets)]);
  }
  return graph;
}

/** The strongly connected components with more than one module (Tarjan), each sorted. */
function cycles(graph: Map<string, string[]>): string[][] {
  let index = 0;
  const indices = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  const visit = (node: string): void => {
    indices.set(node, index);
    low.set(node, index);
    index += 1;
    stack.push(node);
    onStack.add(node);
    for (const next of graph.get(node) ?? []) {
      if (!indices.has(next)) {
        visit(next);
        low.set(node, Math.min(low.get(node) ?? 0, low.get(next) ?? 0));
      } else if (onStack.has(next)) low.set(node, Math.min(low.get(node) ?? 0, indices.get(next) ?? 0));
    }
    if (low.get(node) !== indices.get(node)) return;
    const component: string[] = [];
    for (let member = stack.pop(); member !== undefined; member = stack.pop()) {
      onStack.delete(member);
      component.push(relative(ROOT, member));
      if (member === node) break;
    }
    if (component.length > 1) found.push(component.sort());
  };
  for (const node of graph.keys()) if (!indices.has(node)) visit(node);
  return found;
}

describe('no import cycles (issue 30, point 6)', () => {
  const graph = importGraph();

  it('reads the whole tree, imports of @herald/* packages resolved to their sources', () => {
    expect(graph.size).toBeGreaterThan(300);
    const ingress = [...graph.entries()].find(([file]) => file.endsWith('services/ingress/src/ingress-server.ts'));
    expect(ingress?.[1].some((target) => target.endsWith('libs/queue/src/index.ts') || target.includes('/services/ingress/src/'))).toBe(true);
  });

  it('finds a cycle when there is one (the check itself)', () => {
    expect(
      cycles(
        new Map([
          ['a', ['b']],
          ['b', ['c']],
          ['c', ['a']],
          ['d', ['a']],
        ]),
      ),
    ).toEqual([['a', 'b', 'c']]);
  });

  it('has no cycle among the modules of libs, services and cli', () => {
    // The last one, the worker turn's, went when the turn became a pipeline (docs/decisions/2026-12-06-turn-pipeline.md).
    expect(cycles(graph).map((cycle) => cycle.join(' -> '))).toEqual([]);
  });
});
