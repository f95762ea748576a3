import { createHash } from 'node:crypto';

/** Both providers take tool names of at most 64 characters from [a-zA-Z0-9_-]. */
export const MAX_TOOL_NAME = 64;

function shortHash(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, 8);
}

function sanitize(text: string): string {
  return text.replace(/[^A-Za-z0-9_-]/g, '_');
}

/**
 * `mcp_<server>_<tool>` for each of a server's tools, within the providers' limits. A name that is
 * too long, or that two tools would share after sanitising, ends in a hash of the original, so the
 * same tool always gets the same name (tools are named in their sorted order) and no two collide.
 */
export function mcpToolNames(server: string, tools: readonly string[], taken: ReadonlySet<string> = new Set()): Map<string, string> {
  const names = new Map<string, string>();
  const used = new Set(taken);
  for (const tool of [...tools].sort()) {
    let name = sanitize(`mcp_${server}_${tool}`);
    if (name.length > MAX_TOOL_NAME || used.has(name)) {
      name = `${name.slice(0, MAX_TOOL_NAME - 9)}_${shortHash(`${server}\u0000${tool}`)}`;
    }
    for (let n = 2; used.has(name); n += 1) name = `${name.slice(0, MAX_TOOL_NAME - 9)}_${shortHash(`${server}\u0000${tool}\u0000${n}`)}`;
    used.add(name);
    names.set(tool, name);
  }
  return names;
}
