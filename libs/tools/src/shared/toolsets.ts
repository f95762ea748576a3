import { CHAT_PLATFORMS, PLATFORM_FACTS } from '@herald/core';

/** A toolset is data: the tools it names directly and the toolsets it includes. */
export interface Toolset {
  description: string;
  tools: readonly string[];
  includes: readonly string[];
}

export type ToolsetCatalog = Readonly<Record<string, Toolset>>;

const leaf = (description: string, tools: string[]): Toolset => ({ description, tools, includes: [] });
const bundle = (description: string, includes: string[]): Toolset => ({ description, tools: [], includes });

const CORE = ['todo', 'memory', 'session_search', 'clarify', 'file', 'terminal', 'web', 'skills', 'cronjob', 'delegation'];

/**
 * Hermes' leaf toolsets for the tools Herald has, and the platform bundles. Tools registered later
 * (plugins, other libraries) join the toolset named in their own `toolset` field.
 */
export const BUILTIN_TOOLSETS: ToolsetCatalog = {
  todo: leaf('per-session task list', ['todo']),
  memory: leaf('long-term memory and the user profile', ['memory']),
  session_search: leaf('search of earlier conversations', ['session_search']),
  clarify: leaf('ask the person a question and wait for the answer', ['clarify']),
  file: leaf('read, write, patch and search files in the session workspace', ['read_file', 'write_file', 'patch', 'search_files']),
  // Where files can go: the chat platforms' bundles, and scheduled runs (onto the report).
  media: leaf('send workspace files to the chat as photos or documents', ['send_file']),
  terminal: leaf('shell commands in the session workspace, and background processes', ['terminal', 'process']),
  web: leaf('search the web and fetch pages as text', ['web_search', 'web_extract']),
  skills: leaf('reusable procedures', ['skills_list', 'skill_view', 'skill_manage']),
  cronjob: leaf('scheduled jobs', ['cronjob']),
  delegation: leaf('hand tasks to subagents that run as child sessions', ['delegate_task']),
  // Off by default: in no bundle, a profile enables it by name.
  browser: leaf('a web browser: navigate, read the page, click, type', [
    'browser_navigate',
    'browser_snapshot',
    'browser_click',
    'browser_type',
    'browser_press',
    'browser_scroll',
    'browser_back',
    'browser_close',
    'browser_vision',
  ]),
  'herald-core': bundle('every built-in toolset', CORE),
  // No files or shell: for chats where the people are not trusted with the host.
  safe: bundle('conversation tools without files or shell', ['todo', 'memory', 'session_search', 'clarify', 'web', 'skills']),
  'herald-api': bundle('HTTP API sessions', ['herald-core']),
  'herald-cli': bundle('terminal chat sessions', ['herald-core']),
  // Every chat platform of the registry (herald-<platform>): the core tools, and files sent to the chat.
  ...Object.fromEntries(CHAT_PLATFORMS.map((platform): [string, Toolset] => [`herald-${platform}`, bundle(`${PLATFORM_FACTS[platform].label} chats`, ['herald-core', 'media'])])),
  // Unattended: nobody is there to answer a question, and a job does not create jobs.
  // media: a run's send_file attaches the file to its report.
  'herald-cron': bundle('scheduled runs', ['todo', 'memory', 'session_search', 'file', 'terminal', 'web', 'skills', 'media']),
  'herald-review': bundle('background review: memory and skills only', ['memory', 'skills']),
};

/** The bundle a platform gets when nothing is configured for it. */
export function defaultToolsetFor(platform: string, catalog: ToolsetCatalog = BUILTIN_TOOLSETS): string {
  const name = `herald-${platform}`;
  return Object.hasOwn(catalog, name) ? name : 'herald-core';
}

/**
 * Expands toolsets into tool names. `visited` is shared across the whole expansion, so a cycle or
 * a diamond (two includes reaching the same toolset) is expanded once; `all` or `*` means every
 * toolset. `registered` maps toolset name to the registry's tools declaring it, so plugin tools
 * join toolsets by name. Unknown names expand to nothing and are reported in `unknown`.
 */
export function expandToolsets(names: readonly string[], catalog: ToolsetCatalog, registered: ReadonlyMap<string, readonly string[]> = new Map()): { tools: Set<string>; unknown: string[] } {
  const tools = new Set<string>();
  const unknown: string[] = [];
  const visited = new Set<string>();
  const visit = (name: string): void => {
    if (name === 'all' || name === '*') {
      for (const every of [...Object.keys(catalog), ...registered.keys()]) visit(every);
      return;
    }
    if (visited.has(name)) return;
    visited.add(name);
    const toolset = Object.hasOwn(catalog, name) ? catalog[name] : undefined;
    const own = registered.get(name);
    if (!toolset && !own) {
      unknown.push(name);
      return;
    }
    for (const tool of toolset?.tools ?? []) tools.add(tool);
    for (const tool of own ?? []) tools.add(tool);
    for (const include of toolset?.includes ?? []) visit(include);
  };
  for (const name of names) visit(name);
  return { tools, unknown };
}

export interface ResolveInput {
  enabled: readonly string[];
  disabled: readonly string[];
  catalog: ToolsetCatalog;
  /** Toolset name -> registered tools declaring it. */
  registered: ReadonlyMap<string, readonly string[]>;
  /** Plugin tools: offered whatever is enabled, unless a disabled toolset removes them. */
  pluginTools: readonly string[];
  /** Whether a registered tool's requirements are met here; unregistered names are never offered. */
  isAvailable(tool: string): boolean;
}

/**
 * The final tool set: enabled toolsets expanded, plugin tools added, disabled toolsets subtracted
 * last (so a disabled toolset wins however deeply it is included), then availability applied.
 * Sorted, so the tool definitions and the provider's cached prefix stay stable.
 */
export function resolveTools(input: ResolveInput): string[] {
  const { tools } = expandToolsets(input.enabled, input.catalog, input.registered);
  for (const tool of input.pluginTools) tools.add(tool);
  const denied = expandToolsets(input.disabled, input.catalog, input.registered).tools;
  return [...tools].filter((tool) => !denied.has(tool) && input.isAvailable(tool)).sort();
}
