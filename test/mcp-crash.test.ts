import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { INTERRUPTED_RESULT } from '@herald/agent';
import { startFakeOpenAI } from './support/fake-llm.ts';
import type { FakeLLM } from './support/fake-llm.ts';
import { PROCESS_START_MS, startStack, stopProcess, waitFor } from './support/stack.ts';
import type { Stack } from './support/stack.ts';
import { alive, HOSTILE_SERVER } from './support/mcp-servers.ts';

// A worker process is SIGKILLed while an MCP call runs: its server must not outlive it, and the
// turn resumes on another worker as for any tool that is not safe to repeat.
describe('a worker killed during an MCP call', { timeout: 3 * PROCESS_START_MS }, () => {
  let fake: FakeLLM;
  let stack: Stack;
  let dir: string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'herald-mcp-crash-'));
    const file = join(dir, 'mcp.json');
    await writeFile(
      file,
      JSON.stringify({ servers: { hostile: { command: process.execPath, args: [HOSTILE_SERVER, '--pid-file', join(dir, 'server.pid')], approval: 'never', timeout_ms: 120_000 } } }),
    );
    fake = await startFakeOpenAI();
    stack = await startStack({ model: fake, workerProcesses: true, env: { HERALD_LEASE_TTL_MS: '1500', HERALD_SANDBOX: 'none', HERALD_MCP_FILE: file } });
    await stack.startProcess('worker');
  }, 2 * PROCESS_START_MS);
  afterAll(async () => {
    await stack.stop();
  });

  it('leaves no server process behind, and the turn resumes without repeating the call', async () => {
    fake.handler = (request) => {
      const last = request.messages[request.messages.length - 1];
      if (last?.role === 'user') return { toolCalls: [{ name: 'mcp_hostile_slow_write', arguments: { ms: 600_000 } }] };
      return { text: `tool said: ${last?.content ?? ''}` };
    };
    const sent = await stack.post('/v1/messages', { chat_id: 'mcp-crash', user_id: 'u1', text: 'write it' });
    await waitFor(async () => existsSync(join(dir, 'server.pid.call')), { what: 'the MCP call started', timeoutMs: 60_000 });
    const serverPid = Number(readFileSync(join(dir, 'server.pid'), 'utf8'));
    expect(alive(serverPid)).toBe(true);
    const [victim] = stack.processes();
    if (!victim) throw new Error('no worker process');
    await stopProcess(victim, 'SIGKILL');
    await waitFor(async () => !alive(serverPid), { what: 'the orphaned MCP server gone', timeoutMs: 10_000 });
    await stack.startProcess('worker');
    const event = await stack.waitForEvent(sent.body.event_id, 60_000);
    expect(event.reply.text).toBe(`tool said: ${INTERRUPTED_RESULT}`);
  });
});
