import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { waitFor } from './wait.ts';
import { freePort } from './ports.ts';

/** The real MCP servers from npm (devDependencies) and the hostile one written for these tests. */
export const EVERYTHING_SERVER = fileURLToPath(new URL('../../node_modules/@modelcontextprotocol/server-everything/dist/index.js', import.meta.url));
export const FILESYSTEM_SERVER = fileURLToPath(new URL('../../node_modules/@modelcontextprotocol/server-filesystem/dist/index.js', import.meta.url));
export const HOSTILE_SERVER = fileURLToPath(new URL('../fixtures/mcp/hostile-server.mjs', import.meta.url));

/** A port free right now (server-everything takes its port from PORT, not from a listen on 0). */
export { freePort };

/** server-everything over Streamable HTTP (or SSE) on a free port; resolves once it listens. */
export async function startEverythingHttp(mode: 'streamableHttp' | 'sse'): Promise<{ url: string; child: ChildProcess }> {
  const port = await freePort();
  const child = spawn(process.execPath, [EVERYTHING_SERVER, mode], { env: { PATH: process.env.PATH ?? '', PORT: String(port) }, stdio: ['ignore', 'ignore', 'pipe'] });
  let log = '';
  child.stderr?.on('data', (chunk: Buffer) => {
    log += chunk.toString();
  });
  await waitFor(async () => /listening|running/i.test(log), { what: `server-everything ${mode} listening`, timeoutMs: 20_000 });
  return { url: `http://127.0.0.1:${port}/${mode === 'sse' ? 'sse' : 'mcp'}`, child };
}

/** Whether a process id is alive (signal 0 probes without sending). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}
