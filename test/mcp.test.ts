import { existsSync, readFileSync } from 'node:fs';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { execFile } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { promisify } from 'node:util';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI } from './support/fake-llm.ts';
import type { FakeLLM, FakeReply, FakeRequest } from './support/fake-llm.ts';
import { HERALD_BIN, startStack, waitFor } from './support/stack.ts';
import type { Stack } from './support/stack.ts';
import { writeHooks } from './support/hook-fixtures.ts';
import { EVERYTHING_SERVER, FILESYSTEM_SERVER, HOSTILE_SERVER, startEverythingHttp } from './support/mcp-servers.ts';

/** The model calls what the message says (`call NAME {json}`), then reports the tool results. */
function scripted(seen: FakeRequest[]) {
  return (request: FakeRequest): FakeReply => {
    seen.push(request);
    const last = request.messages[request.messages.length - 1];
    if (last?.role === 'tool') return { text: `results: ${last.content}` };
    const match = /^call (\S+)\s*(.*)$/s.exec(request.lastUserText);
    if (!match) return { text: `plain: ${request.lastUserText}` };
    return { toolCalls: [{ name: match[1] as string, arguments: match[2] ? JSON.parse(match[2]) : {} }] };
  };
}

const definitionOf = (request: FakeRequest, name: string) =>
  (request.body.tools as Array<{ function: { name: string; description: string; parameters: unknown } }>).find((tool) => tool.function.name === name)?.function;

describe('MCP servers as tools (one worker, real servers)', { timeout: 120_000 }, () => {
  let fake: FakeLLM;
  let stack: Stack;
  let http: ChildProcess;
  let sse: ChildProcess;
  let dir: string;
  const seen: FakeRequest[] = [];
  const send = (chatId: string, text: string) => stack.post('/v1/messages?wait=30', { chat_id: chatId, user_id: 'u1', text });
  const lastRequest = () => seen[seen.length - 1] as FakeRequest;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'herald-mcp-test-'));
    const web = await startEverythingHttp('streamableHttp');
    http = web.child;
    const old = await startEverythingHttp('sse');
    sse = old.child;
    // What the worker holds: one variable granted by env_from, one secret no server may see.
    process.env.MCP_TEST_GRANTED = 'granted-value-1234';
    process.env.MCP_TEST_SECRET = 'platform-secret-9876';
    const file = join(dir, 'mcp.yaml');
    await writeFile(
      file,
      JSON.stringify({
        servers: {
          everything: { command: process.execPath, args: [EVERYTHING_SERVER, 'stdio'], env_from: ['MCP_TEST_GRANTED'], approval: 'never' },
          hostile: { command: process.execPath, args: [HOSTILE_SERVER, '--pid-file', join(dir, 'hostile.pid')], timeout_ms: 3000 },
          fs: { command: process.execPath, args: [FILESYSTEM_SERVER, '${workspace}'], approval: 'never' },
          web: { url: web.url, internal: true, approval: 'never' },
          ssrf: { url: web.url },
          // Only the older HTTP+SSE transport: `auto` falls back to it.
          legacy: { url: old.url, internal: true, approval: 'never' },
          stuck: { command: process.execPath, args: [HOSTILE_SERVER], approval: 'never', timeout_ms: 120_000 },
        },
      }),
    );
    const hooks = writeHooks(
      {
        'mcp-guard.mjs': `export default function register(ctx) {
          ctx.on('pre_tool_call', (event) => event.tool_name === 'mcp_everything_get-sum' && event.tool_input?.a === 13 ? { action: 'block', message: 'unlucky numbers are blocked' } : undefined);
        }`,
        'mcp-rewrite.mjs': `export default function register(ctx) {
          ctx.on('transform_tool_result', (event) => event.tool_name === 'mcp_everything_echo' && event.result.includes('hookme') ? 'rewritten by the hook' : undefined);
        }`,
      },
      'hooks:\n  - { name: mcp-guard, event: pre_tool_call, module: ./mcp-guard.mjs }\n  - { name: mcp-rewrite, event: transform_tool_result, module: ./mcp-rewrite.mjs }\n',
    );
    fake = await startFakeOpenAI({ handler: scripted(seen) });
    stack = await startStack({
      model: fake,
      env: {
        HERALD_SANDBOX: 'none',
        HERALD_TOOL_SCHEMA_BUDGET: '1000000',
        HERALD_MCP_FILE: file,
        HERALD_HOOKS_FILE: hooks,
        HERALD_MCP_ALLOWED_COMMANDS: process.execPath,
        HERALD_MCP_MAX_MESSAGE_BYTES: String(4 * 1024 * 1024),
      },
    });
  }, 120_000);
  afterAll(async () => {
    await stack?.stop();
    http?.kill('SIGKILL');
    sse?.kill('SIGKILL');
  });

  it('offers each server as mcp_<server>_<tool> and runs server-everything over stdio', async () => {
    const reply = await send('mcp-echo', 'call mcp_everything_echo {"message":"hello there"}');
    expect(reply.body.reply.text).toContain('Echo: hello there');
    const names = lastRequest().toolNames;
    expect(names).toEqual(expect.arrayContaining(['mcp_everything_echo', 'mcp_everything_get-sum', 'mcp_hostile_echo', 'mcp_fs_read_text_file', 'mcp_web_echo']));
    // An HTTP server on a private address, not marked internal, is refused by the SSRF rules.
    expect(names.some((name) => name.startsWith('mcp_ssrf_'))).toBe(false);
    for (const name of names) expect(name).toMatch(/^[A-Za-z0-9_-]{1,64}$/);
    const messages = (await stack.get(`/v1/sessions/${reply.body.session_id}/messages`)).body.messages;
    expect(messages.find((m: any) => m.role === 'tool')).toMatchObject({ name: 'mcp_everything_echo' });
  });

  it('runs server-everything over Streamable HTTP when the operator marks it internal', async () => {
    const reply = await send('mcp-http', 'call mcp_web_get-sum {"a":2,"b":40}');
    expect(reply.body.reply.text).toMatch(/results: .*42/);
  });

  it('applies pre_tool_call and transform_tool_result hooks to MCP calls, and audits them', async () => {
    const blocked = await send('mcp-hooks', 'call mcp_everything_get-sum {"a":13,"b":1}');
    expect(blocked.body.reply.text).toContain('unlucky numbers are blocked');
    expect(blocked.body.reply.text).not.toMatch(/\b14\b/);
    const rewritten = await send('mcp-hooks', 'call mcp_everything_echo {"message":"hookme"}');
    expect(rewritten.body.reply.text).toBe('results: rewritten by the hook');
    const audited = await stack.database.db.selectFrom('audit_log').select(['subject', 'kind']).where('kind', '=', 'tool_call').execute();
    expect(audited.map((row) => row.subject)).toEqual(expect.arrayContaining(['mcp_everything_echo']));
  });

  it('falls back to the older HTTP+SSE transport for a server that has only that', async () => {
    const reply = await send('mcp-sse', 'call mcp_legacy_echo {"message":"over sse"}');
    expect(reply.body.reply.text).toContain('Echo: over sse');
  });

  it('cancels a running call when the person stops the turn', async () => {
    const sent = await stack.post('/v1/messages', { chat_id: 'mcp-stop', user_id: 'u1', text: 'call mcp_stuck_hang' });
    await waitFor(async () => (await stack.get(`/v1/sessions/${sent.body.session_id}/messages`)).body.messages.some((m: any) => m.role === 'assistant'), { what: 'the MCP call started' });
    const started = Date.now();
    await stack.post('/v1/messages', { chat_id: 'mcp-stop', user_id: 'u1', text: '/stop' });
    const event = await stack.waitForEvent(sent.body.event_id, 30_000);
    expect(event.reply.text).toMatch(/^Stopped/);
    expect(Date.now() - started).toBeLessThan(20_000);
  });

  it('herald mcp list shows each server, whether it answers and its tools; mcp test fails for one that does not', async () => {
    const run = promisify(execFile);
    const env = { ...process.env, ...stack.env };
    const listed = await run(process.execPath, [HERALD_BIN, 'mcp', 'list'], { env, timeout: 60_000 });
    expect(listed.stdout).toMatch(/everything {2}\(stdio, file\) {2}up, \d+ tools/);
    expect(listed.stdout).toContain('mcp_everything_echo');
    expect(listed.stdout).toMatch(/ssrf {2}\(http, file\) {2}down: .*(private|loopback|blocked)/i);
    const tested = await run(process.execPath, [HERALD_BIN, 'mcp', 'test', 'web', '--json'], { env, timeout: 60_000 });
    expect(JSON.parse(tested.stdout).servers[0]).toMatchObject({ name: 'web', state: 'up' });
    const failed = await run(process.execPath, [HERALD_BIN, 'mcp', 'test', 'ssrf'], { env, timeout: 60_000 }).catch((error: { code: number; stdout: string }) => error);
    expect(failed).toMatchObject({ code: 1 });
  });

  it("gives a stdio server only its env_from variables, never the worker's secrets", async () => {
    const reply = await send('mcp-env', 'call mcp_everything_get-env');
    expect(reply.body.reply.text).toContain('granted-value-1234');
    expect(reply.body.reply.text).not.toContain('platform-secret-9876');
    expect(reply.body.reply.text).not.toContain('DATABASE_URL');
  });

  it('server-filesystem works inside the session workspace and nowhere else', async () => {
    const allowed = await send('mcp-fs', 'call mcp_fs_list_allowed_directories');
    const workspace = join(stack.config.tools.workspaceRoot, 'main', allowed.body.session_id);
    expect(allowed.body.reply.text).toContain(workspace);
    const wrote = await send('mcp-fs', `call mcp_fs_write_file ${JSON.stringify({ path: join(workspace, 'note.txt'), content: 'kept' })}`);
    expect(wrote.body.reply.text).not.toMatch(/denied|error/i);
    expect(readFileSync(join(workspace, 'note.txt'), 'utf8')).toBe('kept');
    const outside = join(dir, 'escape.txt');
    const refused = await send('mcp-fs', `call mcp_fs_write_file ${JSON.stringify({ path: outside, content: 'no' })}`);
    expect(refused.body.reply.text).toMatch(/denied|outside/i);
    expect(existsSync(outside)).toBe(false);
  });

  it('scans tool descriptions: an injection is withheld from the prompt', async () => {
    await send('mcp-scan', 'hello');
    const weather = definitionOf(lastRequest(), 'mcp_hostile_weather');
    expect(weather?.description).toContain('withheld');
    expect(weather?.description).not.toMatch(/ignore all previous/i);
    expect(definitionOf(lastRequest(), 'mcp_everything_echo')?.description).toBe('Echoes back the input string');
  });

  it('ends a hanging call with an error the model sees, within the timeout', async () => {
    const started = Date.now();
    const reply = await send('mcp-hang', 'call mcp_hostile_hang');
    expect(reply.body.reply.text).toContain('did not answer within 3000 ms');
    expect(Date.now() - started).toBeLessThan(15_000);
  });

  it('a server that dies mid-call fails that call only; the next call restarts it', async () => {
    const before = Number(readFileSync(join(dir, 'hostile.pid'), 'utf8'));
    const died = await send('mcp-die', 'call mcp_hostile_die');
    expect(died.body.reply.text).toMatch(/stopped during the call/);
    const again = await send('mcp-die', 'call mcp_hostile_echo {"text":"back"}');
    expect(again.body.reply.text).toContain('echo: back');
    expect(Number(readFileSync(join(dir, 'hostile.pid'), 'utf8'))).not.toBe(before);
  });

  it('a 50 MB answer is cut off, not held: the call fails and the worker goes on', async () => {
    const reply = await send('mcp-huge', 'call mcp_hostile_huge');
    expect(reply.body.reply.text).toMatch(/larger than 4 MB/);
    expect(reply.body.reply.text.length).toBeLessThan(60_000);
    const next = await send('mcp-huge', 'call mcp_hostile_picture');
    expect(next.body.reply.text).toContain('[image dropped: image/png');
    expect(next.body.reply.text).toContain('a caption');
  });

  it('keeps the tool list of a session fixed when the server changes its tools', async () => {
    const first = await send('mcp-grow', 'call mcp_hostile_grow');
    expect(first.body.reply.text).toContain('grew a tool');
    const firstTools = JSON.stringify(lastRequest().body.tools);
    await send('mcp-grow', 'anything new?');
    expect(lastRequest().toolNames).not.toContain('mcp_hostile_added_later');
    expect(JSON.stringify(lastRequest().body.tools)).toBe(firstTools);
    await send('mcp-grow-next', 'a new session');
    expect(lastRequest().toolNames).toContain('mcp_hostile_added_later');
  });

  it('parks a destructive tool for approval; the approval in the chat runs it', async () => {
    const asked = await send('mcp-approve', 'call mcp_hostile_delete_everything {"confirm":true}');
    expect(asked.body.waiting).toMatchObject({ kind: 'approval', tool: 'mcp_hostile_delete_everything' });
    const approved = await send('mcp-approve', '/approve');
    expect(approved.body.reply.text).toMatch(/^Approved: /);
    const event = await stack.waitForEvent(asked.body.event_id);
    expect(event.reply.text).toContain('deleted every record');
  });

  it('read-only tools run without asking under the default approval', async () => {
    const reply = await send('mcp-readonly', 'call mcp_hostile_echo {"text":"free"}');
    expect(reply.body.waiting).toBeUndefined();
    expect(reply.body.reply.text).toContain('echo: free');
  });

  it("stores a profile's own servers: allowed commands only, secrets by name", async () => {
    const refused = await stack.put('/v1/profiles/main/mcp', { servers: { mine: { command: '/bin/sh', args: ['-c', 'id'] } } });
    expect(refused.status).toBe(400);
    expect(refused.body.error.message).toContain('servers.mine.command');
    const secret = await stack.put('/v1/profiles/main/mcp', { servers: { mine: { command: process.execPath, env_from: ['DATABASE_URL'] } } });
    expect(secret.status).toBe(400);
    expect(secret.body.error.message).toContain('servers.mine.env_from');
    const bad = await stack.put('/v1/profiles/main/mcp', { servers: { mine: { url: 'ftp://example.com' } } });
    expect(bad.status).toBe(400);
    const saved = await stack.put('/v1/profiles/main/mcp', { servers: { mine: { command: process.execPath, args: [HOSTILE_SERVER], approval: 'never' } } });
    expect(saved.status).toBe(200);
    expect((await stack.get('/v1/profiles/main/mcp')).body.servers.mine).toMatchObject({ command: process.execPath, approval: 'never' });
    expect((await stack.get('/v1/profiles/nobody/mcp')).status).toBe(404);
    const reply = await send('mcp-profile', 'call mcp_mine_echo {"text":"own"}');
    expect(reply.body.reply.text).toContain('echo: own');
  });

  it("a tool policy that disables one server's toolset hides its tools and refuses a call", async () => {
    const patched = await stack.patch('/v1/profiles/main', { tool_policy: { disabled: ['mcp:hostile'] } });
    expect(patched.status).toBe(200);
    try {
      const reply = await send('mcp-policy', 'call mcp_hostile_echo {"text":"nope"}');
      expect(lastRequest().toolNames.some((name) => name.startsWith('mcp_hostile_'))).toBe(false);
      expect(lastRequest().toolNames).toContain('mcp_everything_echo');
      expect(reply.body.reply.text).toMatch(/not permitted|does not exist/);
      expect(reply.body.reply.text).not.toContain('echo: nope');
    } finally {
      await stack.patch('/v1/profiles/main', { tool_policy: {} });
    }
  });
});
