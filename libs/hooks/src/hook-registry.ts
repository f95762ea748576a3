import { readFile } from 'node:fs/promises';
import { dirname, extname, isAbsolute, resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import { parse as parseYaml } from 'yaml';
import { describeIssues, hookKind, hooksFileSchema, profileHooksSchema } from './hook-spec.ts';
import type { HookEvent, HookSpec } from './hook-spec.ts';

/** What a module hook's handler gets besides the event: aborted when the hook's timeout passes. */
export interface HookHandlerContext {
  signal: AbortSignal;
  event: HookEvent;
  hook: string;
}
export type HookHandler = (event: Readonly<Record<string, unknown>>, context: HookHandlerContext) => unknown;

/** A hook ready to run: its spec and, for a module, the handlers its register(ctx) installed. */
export interface LoadedHook {
  spec: HookSpec;
  kind: 'module' | 'command' | 'url';
  handlers: readonly HookHandler[];
}

/** Thrown at start for a hooks file that cannot be used; the message says which hook and why. */
export class HooksFileError extends Error {
  override readonly name = 'HooksFileError';
}

async function parseFile(path: string): Promise<unknown> {
  let text: string;
  try {
    text = await readFile(path, 'utf8');
  } catch (error) {
    throw new HooksFileError(`HERALD_HOOKS_FILE: cannot read ${path}: ${(error as Error).message}`);
  }
  try {
    return extname(path).toLowerCase() === '.json' ? JSON.parse(text) : parseYaml(text);
  } catch (error) {
    throw new HooksFileError(`HERALD_HOOKS_FILE: ${path} is not valid ${extname(path) === '.json' ? 'JSON' : 'YAML'}: ${(error as Error).message}`);
  }
}

/** Imports a module hook and runs its default export `register(ctx)`, keeping the handlers for its event. */
async function loadModule(spec: HookSpec & { module: string }, baseDir: string): Promise<HookHandler[]> {
  const target = /^[a-z]+:/.test(spec.module) ? spec.module : pathToFileURL(isAbsolute(spec.module) ? spec.module : resolve(baseDir, spec.module)).href;
  let register: unknown;
  try {
    register = ((await import(target)) as { default?: unknown }).default;
  } catch (error) {
    throw new HooksFileError(`hook '${spec.name}': cannot load module ${spec.module}: ${(error as Error).message}`);
  }
  if (typeof register !== 'function') throw new HooksFileError(`hook '${spec.name}': ${spec.module} has no default export register(ctx)`);
  const handlers: HookHandler[] = [];
  const others: string[] = [];
  await (register as (ctx: { on(event: string, handler: HookHandler): void }) => unknown)({
    on: (event, handler) => {
      if (typeof handler !== 'function') throw new HooksFileError(`hook '${spec.name}': ctx.on('${event}') needs a function`);
      if (event === spec.event) handlers.push(handler);
      else others.push(event);
    },
  });
  if (handlers.length === 0) {
    throw new HooksFileError(`hook '${spec.name}': ${spec.module} registered no handler for '${spec.event}'${others.length > 0 ? ` (only for ${others.join(', ')})` : ''}`);
  }
  return handlers;
}

/**
 * The hooks of the deployment: the operator's file, validated and its modules loaded once at
 * start, plus per-profile hooks from the API, resolved per turn (hooksFor). File order is kept.
 */
export class HookRegistry {
  readonly #hooks: readonly LoadedHook[];

  constructor(hooks: readonly LoadedHook[]) {
    this.#hooks = hooks;
  }

  static empty(): HookRegistry {
    return new HookRegistry([]);
  }

  /** Validates and loads the file; any problem throws HooksFileError naming the hook and the reason. */
  static async fromFile(path: string): Promise<HookRegistry> {
    const parsed = hooksFileSchema.safeParse(await parseFile(path));
    if (!parsed.success) throw new HooksFileError(`HERALD_HOOKS_FILE ${path} is invalid:\n${describeIssues(parsed.error)}`);
    const loaded: LoadedHook[] = [];
    for (const spec of parsed.data.hooks) {
      loaded.push({ spec, kind: hookKind(spec), handlers: 'module' in spec ? await loadModule(spec, dirname(path)) : [] });
    }
    return new HookRegistry(loaded);
  }

  /** True when a url hook exists (the deployment then needs HERALD_HOOKS_SECRET). */
  hasKind(kind: LoadedHook['kind']): boolean {
    return this.#hooks.some((hook) => hook.kind === kind);
  }

  /** The file's hooks that apply to `profileId`, then that profile's own (stored, validated on write). */
  hooksFor(profileId: string, stored: unknown = []): LoadedHook[] {
    const own = profileHooksSchema.safeParse(stored);
    const profileHooks: LoadedHook[] = own.success ? own.data.map((spec) => ({ spec, kind: hookKind(spec), handlers: [] })) : [];
    return [...this.#hooks.filter((hook) => hook.spec.profiles === undefined || hook.spec.profiles.includes(profileId)), ...profileHooks];
  }

  /** True when any hook (of the file, or possibly of a profile) may take `event`. */
  listens(event: HookEvent): boolean {
    return this.#hooks.some((hook) => hook.spec.event === event);
  }
}
