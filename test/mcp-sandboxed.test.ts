import { readdirSync, readFileSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI } from './support/fake-llm.ts';
import type { FakeLLM, FakeReply, FakeRequest } from './support/fake-llm.ts';
import { startStack } from './support/stack.ts';
import type { Stack } from './support/stack.ts';
import { EVERYTHING_SERVER } from './support/mcp-servers.ts';

/** The model calls the tool the message names, then reports what it returned. */
function callThenReport(request: FakeRequest): FakeReply {
  const last = request.messages.at(-1);
  if (last?.role === 'tool') return { text: `results: ${last.content}` };
  return { toolCalls: [{ name: 'mcp_everything_echo', arguments: { message: request.lastUserText } }] };
}

/** The uid of every process whose command line names the server, read from /proc. */
function serverUids(): number[] {
  const uids: number[] = [];
  for (const pid of readdirSync('/proc').filter((name) => /^\d+$/.test(name))) {
    try {
      if (!readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes(EVERYTHING_SERVER)) continue;
      const uid = /^Uid:\s+(\d+)/m.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
      if (uid !== undefined) uids.push(Number(uid));
    } catch {
      // gone meanwhile
    }
  }
  return uids;
}

// As the terminal's commands: bubblewrap, and as root the sandbox's own unprivileged user.
describe.skipIf(process.getuid?.() !== 0)('an MCP stdio server inside the tool sandbox (bubblewrap, a root worker)', { timeout: 120_000 }, () => {
  let fake: FakeLLM;
  let stack: Stack;

  beforeAll(async () => {
    const dir = await mkdtemp(join(tmpdir(), 'herald-mcp-bwrap-'));
    const file = join(dir, 'mcp.json');
    await writeFile(file, JSON.stringify({ servers: { everything: { command: process.execPath, args: [EVERYTHING_SERVER, 'stdio'], approval: 'never' } } }));
    fake = await startFakeOpenAI({ handler: callThenReport });
    // The server's code is read-only inside the sandbox, as an operator grants it.
    const modules = dirname(dirname(dirname(dirname(EVERYTHING_SERVER))));
    stack = await startStack({ model: fake, env: { HERALD_MCP_FILE: file, HERALD_MCP_ALLOWED_COMMANDS: process.execPath, HERALD_SANDBOX_READONLY_PATHS: modules } });
  }, 120_000);
  afterAll(async () => {
    await stack?.stop();
  });

  it('answers through bubblewrap, and the server runs as the sandbox user, never as root', async () => {
    const reply = await stack.post('/v1/messages?wait=60', { chat_id: 'mcp-bwrap', user_id: 'u1', text: 'inside the sandbox' });
    expect(reply.status).toBe(200);
    expect(reply.body.reply.text).toContain('Echo: inside the sandbox');
    const uids = serverUids();
    expect(uids.length).toBeGreaterThan(0);
    expect(uids.every((uid) => uid === stack.config.tools.sandbox.user.uid)).toBe(true);
    expect(uids).not.toContain(0);
  });
});
