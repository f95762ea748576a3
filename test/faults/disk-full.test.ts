import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI } from '../support/fake-llm.ts';
import type { FakeLLM } from '../support/fake-llm.ts';
import { startStack } from '../support/stack.ts';
import type { Stack } from '../support/stack.ts';
import { recordRecovery } from './fault-support.ts';

/**
 * The workspaces' disk full (a 256 KiB tmpfs as HERALD_WORKSPACE_ROOT, mounted by root as CI
 * runs): a write that does not fit is a tool error the model reads, and the turn ends with an
 * answer instead of hanging; the next turn on the same session works.
 */
describe.skipIf(process.getuid?.() !== 0)('faults: the workspace disk is full', () => {
  let dir: string;
  let model: FakeLLM;
  let stack: Stack;

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'herald-full-'));
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=256k,mode=0755', 'herald-full', dir]);
    model = await startFakeOpenAI({
      handler: (request) => {
        const last = request.messages.at(-1);
        if (last?.role === 'tool') return { text: `tool said: ${String(last.content).slice(0, 300)}` };
        const size = request.lastUserText === 'write big' ? 600_000 : 10;
        return { toolCalls: [{ name: 'write_file', arguments: { path: 'notes.txt', content: 'x'.repeat(size) } }] };
      },
    });
    stack = await startStack({ model, env: { HERALD_WORKSPACE_ROOT: dir } });
  });
  afterAll(async () => {
    await stack?.stop();
    await model?.close();
    execFileSync('umount', ['-l', dir]);
    rmSync(dir, { recursive: true, force: true });
  });

  it('a write that does not fit is a tool error, not a stuck turn, and the session goes on', async () => {
    const started = Date.now();
    const full = await stack.post('/v1/messages?wait=60', { chat_id: 'full', user_id: 'u1', text: 'write big' });
    const answeredMs = Date.now() - started;
    expect(full.status).toBe(200);
    expect(full.body.reply.text).toMatch(/^tool said: .*(ENOSPC|no space left)/i);
    const small = await stack.post('/v1/messages?wait=60', { chat_id: 'full', user_id: 'u1', text: 'write small' });
    expect(small.status).toBe(200);
    expect(small.body.reply.text).not.toMatch(/ENOSPC|no space left/i);
    expect(small.body.session_id).toBe(full.body.session_id);
    recordRecovery('workspace-disk-full', answeredMs, { tmpfs: '256k' });
  });
});
