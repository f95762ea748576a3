import { readdirSync, readFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI } from '../support/fake-llm.ts';
import type { FakeLLM, FakeReply, FakeRequest } from '../support/fake-llm.ts';
import { startHeraldProcess, startStack, TEST_TOKEN } from '../support/stack.ts';
import type { HeraldProcess, Stack } from '../support/stack.ts';

/*
 * Issue 17, point 2: the terminal runs in a sandbox that cannot see the platform. Tried the way
 * the issue reproduced it, against a real `herald worker` process holding the platform's secrets
 * in its environment: the worker's environ, its processes, Postgres and Redis on loopback, the
 * Postgres socket, other sessions' workspaces and the host's files are all out of reach. Without a
 * sandbox the terminal and file tools are not offered, and the worker says how to get them.
 */

/**
 * The model runs the command in the person's message ("run: <command>") and reports the output;
 * "tool: <name> <json arguments>" calls that tool instead.
 */
function runAndReport(request: FakeRequest): FakeReply {
  const last = request.messages[request.messages.length - 1];
  if (last?.role === 'tool') return { text: `output:\n${last.content}` };
  const call = /^tool: (\w+) (\{[\s\S]*\})$/.exec(request.lastUserText);
  if (call) return { toolCalls: [{ name: call[1]!, arguments: JSON.parse(call[2]!) }] };
  const command = /^run: ([\s\S]*)$/.exec(request.lastUserText)?.[1];
  return command === undefined ? { text: 'nothing to run' } : { toolCalls: [{ name: 'terminal', arguments: { command } }] };
}

async function stop(worker: HeraldProcess | undefined): Promise<void> {
  if (!worker) return;
  if (worker.child.exitCode === null && worker.child.signalCode === null) worker.child.kill('SIGTERM');
  await worker.exited;
}

describe('the terminal sandbox, against a real worker process', () => {
  let fake: FakeLLM;
  let stack: Stack;
  let worker: HeraldProcess | undefined;
  /** Host processes running a sandboxed file tool call of this stack: node with the entry, not the bwrap around it. */
  const fileToolProcesses = (): number[] =>
    readdirSync('/proc')
      .filter((entry) => /^\d+$/.test(entry))
      .filter((pid) => {
        try {
          const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
          if (argv[0]!.endsWith('bwrap') || !argv.some((arg) => arg.includes('file-sandbox-entry'))) return false;
          return readFileSync(`/proc/${pid}/environ`, 'utf8').includes(`HOME=${stack.env.HERALD_WORKSPACE_ROOT!}`);
        } catch {
          return false;
        }
      })
      .map(Number);
  /** Secrets the worker holds in its environment, as a deployment's worker would. */
  const secrets = { OPENAI_API_KEY: 'sk-sandbox-test-key', TELEGRAM_WEBHOOK_SECRET: 'hook-secret-xyz', TOOLS_GIT_TOKEN: 'granted-token-123' };
  const run = async (chat: string, command: string): Promise<string> => {
    const response = await stack.post('/v1/messages?wait=60', { chat_id: chat, user_id: 'u1', text: `run: ${command}` });
    expect(response.status).toBe(200);
    return response.body.reply.text as string;
  };

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    fake.handler = runAndReport;
    stack = await startStack({
      workers: 0,
      env: { HERALD_MODEL: 'openai/gpt-test', OPENAI_BASE_URL: fake.url, OPENAI_API_KEY: secrets.OPENAI_API_KEY },
    });
    worker = await startHeraldProcess('worker', { ...stack.env, ...secrets, HERALD_SANDBOX_ENV: 'TOOLS_GIT_TOKEN' });
    expect(worker!.output()).toContain('terminal and file tools run in a bubblewrap sandbox');
  });
  afterAll(async () => {
    await stop(worker);
    await stack.stop();
    await fake.close();
  });

  it('passes none of the worker environment, not even through /proc, except what the operator granted', async () => {
    const output = await run('env', "cat /proc/$PPID/environ /proc/1/environ /proc/self/environ | tr '\\0' '\\n'; echo; env");
    for (const value of [stack.env.DATABASE_URL!, stack.env.REDIS_URL!, TEST_TOKEN, ...Object.values(secrets).slice(0, 2)]) {
      expect(output).not.toContain(value);
    }
    expect(output).not.toMatch(/^(DATABASE_URL|REDIS_URL|HERALD_[A-Z_]+)=/m);
    expect(output).toMatch(/^TOOLS_GIT_TOKEN=granted-token-123$/m);
  });

  it('shows only its own processes: the worker and its command line are not there', async () => {
    const output = await run('procs', 'ls -d /proc/[0-9]* | wc -l; for p in /proc/[0-9]*; do tr "\\0" " " < $p/cmdline; echo; done');
    expect(output).not.toContain('herald.js');
    expect(output).not.toContain(process.execPath);
    expect(Number(/output:\n(\d+)/.exec(output)?.[1])).toBeLessThan(10);
  });

  it('cannot reach Postgres, Redis or the API on loopback, nor the Postgres socket', async () => {
    const apiPort = new URL(stack.url).port;
    const output = await run(
      'net',
      `for port in 5432 6379 ${apiPort}; do (exec 3<>/dev/tcp/127.0.0.1/$port) 2>/dev/null && echo "reached $port" || echo "refused $port"; done; ls /var/run/postgresql /run/postgresql 2>&1`,
    );
    expect(output).toContain('refused 5432');
    expect(output).toContain('refused 6379');
    expect(output).toContain(`refused ${apiPort}`);
    expect(output).not.toContain('reached');
    expect(output).toMatch(/\/var\/run\/postgresql.*No such file or directory/);
  });

  it("sees neither another session's workspace nor the host's files, and writes only its own workspace", async () => {
    const mine = await run('ws-a', 'echo alpha-secret > mine.txt && basename "$PWD"');
    const sessionA = /output:\n(\S+)/.exec(mine)![1]!;
    const listing = await run('ws-b', 'ls -a ..; basename "$PWD"');
    const [, ...names] = listing.split('\n[')[0]!.split('\n');
    const sessionB = names[names.length - 1]!;
    expect(names).toEqual(['.', '..', sessionB, sessionB]);
    const output = await run('ws-b', `cat ../${sessionA}/mine.txt; touch /x /etc/x /usr/x 2>&1; id -u; touch here.txt && echo wrote-own`);
    expect(output).not.toContain('alpha-secret');
    expect(output).toContain(`../${sessionA}/mine.txt: No such file or directory`);
    expect(output.match(/Read-only file system/g)?.length).toBe(3);
    expect(output).not.toMatch(/^0$/m);
    expect(output).toContain('wrote-own');
    const hostFiles = await run('ws-b', 'ls /home /root /var /opt 2>&1; cat /etc/shadow 2>&1 | head -1');
    expect(hostFiles.match(/No such file or directory/g)?.length).toBeGreaterThanOrEqual(5);
  });

  it("runs the file tools in the sandbox too: the call's process holds none of the worker's secrets", async () => {
    expect(await run('files', `printf '${'a'.repeat(48)}b\\n' > slow.txt && echo ok`)).toContain('ok');
    // A catastrophic pattern keeps search_files running for its 10 s budget: long enough to look at its process.
    const reply = stack.post('/v1/messages?wait=60', { chat_id: 'files', user_id: 'u1', text: 'tool: search_files {"pattern":"(a+)+$"}' });
    let pids: number[] = [];
    for (let i = 0; i < 300 && pids.length === 0; i += 1) {
      await sleep(50);
      pids = fileToolProcesses();
    }
    expect(pids.length).toBeGreaterThan(0);
    const environ = readFileSync(`/proc/${pids[0]}/environ`, 'utf8');
    for (const value of [stack.env.DATABASE_URL!, stack.env.REDIS_URL!, TEST_TOKEN, ...Object.values(secrets).slice(0, 2)]) {
      expect(environ).not.toContain(value);
    }
    expect(environ).not.toMatch(/(^|\0)(DATABASE_URL|REDIS_URL|HERALD_[A-Z_]+)=/);
    // Its own PID namespace: NSpid lists the host's pid and the sandbox's.
    expect(readFileSync(`/proc/${pids[0]}/status`, 'utf8')).toMatch(/^NSpid:\s+\d+\s+\d+/m);
    const response = await reply;
    expect(response.status).toBe(200);
    expect(response.body.reply.text).toMatch(/took too long/);
  });

  it('is not offered where no sandbox can be had, and the worker says how to get one', async () => {
    await stop(worker);
    // No bwrap on the worker's PATH.
    worker = await startHeraldProcess('worker', { ...stack.env, PATH: '/nonexistent' });
    expect(worker!.output()).toMatch(/terminal and file tools are off: bubblewrap \(bwrap\) is not installed; install bubblewrap .* or set HERALD_SANDBOX=none/);
    const response = await stack.post('/v1/messages?wait=60', { chat_id: 'nosandbox', user_id: 'u1', text: 'run: id' });
    expect(response.status).toBe(200);
    const offered = fake.requests.find((request) => request.sessionKey === response.body.session_id)?.toolNames ?? [];
    expect(offered).toContain('memory');
    for (const tool of ['terminal', 'read_file', 'write_file', 'patch', 'search_files']) expect(offered).not.toContain(tool);
    expect(response.body.reply.text).toMatch(/Tool 'terminal' is not available on this worker: terminal and file tools are off/);
  });

  it('with HERALD_SANDBOX=none says at start that tools run unconfined', async () => {
    await stop(worker);
    worker = await startHeraldProcess('worker', { ...stack.env, HERALD_SANDBOX: 'none' });
    expect(worker!.output()).toContain('HERALD_SANDBOX=none: terminal and file tools run unconfined');
    // The environment is still built from the allow-list.
    const output = await run('unconfined', 'env');
    expect(output).not.toContain(stack.env.DATABASE_URL!);
  });
});
