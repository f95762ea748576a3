import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeAnthropic, startFakeOpenAI } from './support/fake-llm.ts';
import type { FakeLLM, FakeRequest } from './support/fake-llm.ts';
import { metricValue } from './support/prometheus.ts';
import { PROCESS_START_MS, spawnHerald, startStack, stopProcess, waitFor } from './support/stack.ts';
import type { HeraldProcess, Stack } from './support/stack.ts';
import { createTestDatabase } from './support/test-database.ts';

const KEYS = { POOL_KEY_A: 'sk-pool-a', POOL_KEY_B: 'sk-pool-b', BACKUP_KEY: 'sk-ant-backup' };
const keyOf = (request: FakeRequest) => {
  const header = String(request.headers['authorization'] ?? request.headers['x-api-key'] ?? '');
  return Object.entries(KEYS).find(([, value]) => header.includes(value))?.[0] ?? 'none';
};

/** The pino JSON lines a process logged. */
const logLines = (process: HeraldProcess): Record<string, unknown>[] =>
  process
    .output()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>);

/** `herald_model_failovers_total` as a worker process serves it on /metrics. */
async function failovers(process: HeraldProcess, labels: Record<string, string>): Promise<number | undefined> {
  const port = await waitFor(async () => /metrics and health on port (\d+)/.exec(process.output())?.[1], { what: 'metrics port' });
  const text = await (await fetch(`http://127.0.0.1:${port}/metrics`)).text();
  return metricValue(text, 'herald_model_failovers_total', labels);
}

function providersFile(primary: FakeLLM, backup: FakeLLM): string {
  const dir = mkdtempSync(join(tmpdir(), 'herald-providers-'));
  const path = join(dir, 'providers.yaml');
  writeFileSync(
    path,
    [
      'providers:',
      '  pool:',
      '    type: openai',
      `    base_url: ${primary.url}`,
      '    api_key_envs: [POOL_KEY_A, POOL_KEY_B]',
      '  backup:',
      '    type: anthropic',
      `    base_url: ${backup.url}`,
      '    api_key_env: BACKUP_KEY',
      '',
    ].join('\n'),
  );
  return path;
}

describe('model failover across keys and models, shared by worker processes', { timeout: 3 * PROCESS_START_MS }, () => {
  let primary: FakeLLM;
  let backup: FakeLLM;
  let stack: Stack;
  beforeAll(async () => {
    primary = await startFakeOpenAI();
    backup = await startFakeAnthropic();
    backup.handler = (request) => ({ text: `backup answers: ${request.lastUserText}` });
    stack = await startStack({
      workerProcesses: true,
      env: {
        ...KEYS,
        HERALD_PROVIDERS_FILE: providersFile(primary, backup),
        HERALD_MODEL: 'pool/gpt-fast',
        HERALD_MODEL_FALLBACKS: 'backup/claude-steady',
      },
    });
  }, PROCESS_START_MS);
  afterAll(async () => {
    await stack.stop();
    await primary.close();
    await backup.close();
  });

  it('moves from a 429 key to a 503 key to the fallback model, and records what answered', async () => {
    primary.handler = (request) => (keyOf(request) === 'POOL_KEY_A' ? { error: { status: 429, headers: { 'retry-after': '60' } } } : { error: { status: 503, headers: { 'retry-after': '60' } } });
    const first = await stack.startProcess('worker');
    const second = await stack.startProcess('worker');
    const response = await stack.post('/v1/messages?wait=30', { chat_id: 'fo-1', user_id: 'u1', text: 'status?' });
    expect(response.status).toBe(200);
    expect(response.body.reply.text).toBe('backup answers: status?');
    expect(primary.requests.map(keyOf)).toEqual(['POOL_KEY_A', 'POOL_KEY_B']);
    const call = await stack.database.db.selectFrom('model_calls').select(['provider', 'model', 'key_name']).where('session_id', '=', response.body.session_id).executeTakeFirstOrThrow();
    expect(call).toEqual({ provider: 'backup', model: 'claude-steady', key_name: 'BACKUP_KEY' });
    // The move to the fallback model is exported by the worker that made it (the other has none).
    const moved = { from: 'pool/gpt-fast', to: 'backup/claude-steady', reason: 'server' };
    expect(((await failovers(first, moved)) ?? 0) + ((await failovers(second, moved)) ?? 0)).toBe(1);
    const cooling = await stack.database.db.selectFrom('provider_cooldowns').select(['key_id', 'reason']).orderBy('key_id').execute();
    expect(cooling).toEqual([
      { key_id: 'pool:POOL_KEY_A', reason: 'rate_limit' },
      { key_id: 'pool:POOL_KEY_B', reason: 'server' },
    ]);

    // Whichever worker takes the next turn, neither resting key is called again.
    await stopProcess(first, 'SIGTERM');
    const next = await stack.post('/v1/messages?wait=30', { chat_id: 'fo-2', user_id: 'u1', text: 'and now?' });
    expect(next.body.reply.text).toBe('backup answers: and now?');
    expect(primary.requests).toHaveLength(2);
    // A worker started after the cool-downs reads them from Postgres.
    await stopProcess(second, 'SIGTERM');
    await stack.startProcess('worker');
    const third = await stack.post('/v1/messages?wait=30', { chat_id: 'fo-3', user_id: 'u1', text: 'still?' });
    expect(third.body.reply.text).toBe('backup answers: still?');
    expect(primary.requests).toHaveLength(2);
  });
});

describe('model failover on a refused key, in one worker', () => {
  let primary: FakeLLM;
  let backup: FakeLLM;
  let stack: Stack;
  beforeAll(async () => {
    primary = await startFakeOpenAI();
    backup = await startFakeAnthropic();
    stack = await startStack({
      env: { ...KEYS, HERALD_PROVIDERS_FILE: providersFile(primary, backup), HERALD_MODEL: 'pool/gpt-fast' },
    });
  });
  afterAll(async () => {
    await stack.stop();
    await primary.close();
    await backup.close();
  });

  it('skips a key the provider refuses (auth) and never calls it again, without failing the turn', async () => {
    primary.handler = (request) => (keyOf(request) === 'POOL_KEY_A' ? { error: { status: 401 } } : { text: `pool answers: ${request.lastUserText}` });
    const one = await stack.post('/v1/messages?wait=30', { chat_id: 'auth-1', user_id: 'u1', text: 'one' });
    expect(one.body.reply.text).toBe('pool answers: one');
    const two = await stack.post('/v1/messages?wait=30', { chat_id: 'auth-2', user_id: 'u1', text: 'two' });
    expect(two.body.reply.text).toBe('pool answers: two');
    expect(primary.requests.map(keyOf)).toEqual(['POOL_KEY_A', 'POOL_KEY_B', 'POOL_KEY_B']);
    const rows = await stack.database.db.selectFrom('model_calls').select('key_name').execute();
    expect(rows.map((row) => row.key_name)).toEqual(['POOL_KEY_B', 'POOL_KEY_B']);
  });

  it('does not fail over a request the provider rejects as invalid', async () => {
    primary.handler = () => ({ error: { status: 400, body: { error: { message: 'bad tool schema', type: 'invalid_request_error', code: null } } } });
    const before = primary.requests.length;
    const answer = await stack.post('/v1/messages?wait=30', { chat_id: 'bad-1', user_id: 'u1', text: 'x' });
    expect(answer.body.reply.text).toMatch(/rejected the request/);
    // One call, on the one usable key: a 400 is the request's fault, not the key's.
    expect(primary.requests.length - before).toBe(1);
  });
});

describe('a refused last key, then the whole chain failing, in a worker process', { timeout: 2 * PROCESS_START_MS }, () => {
  let primary: FakeLLM;
  let backup: FakeLLM;
  let stack: Stack;
  let worker: HeraldProcess;
  const refusals = () => logLines(worker).filter((line) => String(line['msg']).startsWith('the provider refused this key (auth)'));
  beforeAll(async () => {
    primary = await startFakeOpenAI();
    backup = await startFakeAnthropic();
    stack = await startStack({
      workerProcesses: true,
      env: { ...KEYS, HERALD_PROVIDERS_FILE: providersFile(primary, backup), HERALD_MODEL: 'pool/gpt-fast', HERALD_MODEL_FALLBACKS: 'backup/claude-steady' },
    });
    worker = await stack.startProcess('worker');
  }, PROCESS_START_MS);
  afterAll(async () => {
    await stack.stop();
    await primary.close();
    await backup.close();
  });

  it('logs that the refused last key of a provider is skipped and moves on to the next model, never retrying that key', async () => {
    primary.handler = () => ({ error: { status: 401 } });
    backup.handler = (request) => ({ text: `backup answers: ${request.lastUserText}` });
    const one = await stack.post('/v1/messages?wait=30', { chat_id: 'last-1', user_id: 'u1', text: 'one' });
    expect(one.body.reply.text).toBe('backup answers: one');
    const two = await stack.post('/v1/messages?wait=30', { chat_id: 'last-2', user_id: 'u1', text: 'two' });
    expect(two.body.reply.text).toBe('backup answers: two');
    expect(primary.requests.map(keyOf)).toEqual(['POOL_KEY_A', 'POOL_KEY_B']);
    expect(refusals()).toEqual([
      expect.objectContaining({
        key: 'pool:POOL_KEY_A',
        model: 'pool/gpt-fast',
        restMs: 600_000,
        nextModel: 'pool/gpt-fast',
        nextKey: 'pool:POOL_KEY_B',
        msg: 'the provider refused this key (auth); skipping it, trying the next',
      }),
      expect.objectContaining({ key: 'pool:POOL_KEY_B', model: 'pool/gpt-fast', restMs: 600_000, nextModel: 'backup/claude-steady', nextKey: 'backup:BACKUP_KEY' }),
    ]);
    expect(logLines(worker)).toContainEqual(expect.objectContaining({ msg: 'model failover', from: 'pool/gpt-fast', to: 'backup/claude-steady', reason: 'auth' }));
    expect(worker.output()).not.toContain('sk-');
  });

  it('fails the turn with one line naming the chain and its key variables once every key and model failed', async () => {
    backup.handler = () => ({ error: { status: 401 } });
    const before = { pool: primary.requests.length, backup: backup.requests.length };
    const answer = await stack.post('/v1/messages?wait=30', { chat_id: 'last-3', user_id: 'u1', text: 'three' });
    expect(answer.status).toBe(200);
    expect(answer.body.reply.text).toBe(
      'Sorry, I could not answer: every model of the chain failed (pool/gpt-fast, backup/claude-steady; the last with HTTP 401). ' +
        'The model provider refused the credentials; check POOL_KEY_A, POOL_KEY_B (provider pool of HERALD_PROVIDERS_FILE) and BACKUP_KEY (provider backup of HERALD_PROVIDERS_FILE).',
    );
    // The pool's refused keys rest; the backup's one key was tried once, and nothing is left.
    expect({ pool: primary.requests.length - before.pool, backup: backup.requests.length - before.backup }).toEqual({ pool: 0, backup: 1 });
    expect(refusals().at(-1)).toMatchObject({ key: 'backup:BACKUP_KEY', msg: 'the provider refused this key (auth); skipping it; no other key or model is left' });
    expect(refusals().at(-1)).not.toHaveProperty('nextKey');
    expect(worker.output()).not.toContain('sk-');
  });
});

describe('a providers configuration that cannot work is refused at start, naming the field', () => {
  it.each([
    ['an unknown provider in HERALD_MODEL', { HERALD_MODEL: 'nowhere/gpt' }, /HERALD_MODEL: nowhere\/gpt names the provider "nowhere"/],
    ['an unknown provider in the fallbacks', { HERALD_MODEL: 'pool/gpt', HERALD_MODEL_FALLBACKS: 'pool/a,gone/b' }, /HERALD_MODEL_FALLBACKS\[1\]: gone\/b names the provider "gone"/],
    ['a key variable that is not set', { HERALD_MODEL: 'pool/gpt', POOL_KEY_B: '' }, /pool\.api_key_envs\[1\]: the variable POOL_KEY_B is not set/],
  ])(
    '%s',
    async (_name, env, message) => {
      const database = await createTestDatabase();
      try {
        const dir = mkdtempSync(join(tmpdir(), 'herald-providers-'));
        const path = join(dir, 'providers.yaml');
        writeFileSync(path, 'pool:\n  type: openai\n  base_url: http://127.0.0.1:9/v1\n  api_key_envs: [POOL_KEY_A, POOL_KEY_B]\n');
        const worker = spawnHerald('worker', { DATABASE_URL: database.url, REDIS_URL: 'redis://127.0.0.1:6379', ...KEYS, HERALD_PROVIDERS_FILE: path, ...env });
        const code = await worker.exited;
        expect(code).not.toBe(0);
        expect(worker.output()).toMatch(message);
        expect(worker.output()).not.toContain('sk-pool');
      } finally {
        await database.drop();
      }
    },
    PROCESS_START_MS,
  );

  it(
    'a providers file with a bad field',
    async () => {
      const dir = mkdtempSync(join(tmpdir(), 'herald-providers-'));
      const path = join(dir, 'providers.json');
      writeFileSync(path, JSON.stringify({ pool: { type: 'openia' } }));
      const database = await createTestDatabase();
      try {
        const worker = spawnHerald('worker', { DATABASE_URL: database.url, HERALD_PROVIDERS_FILE: path, HERALD_MODEL: 'pool/x' });
        expect(await worker.exited).not.toBe(0);
        expect(worker.output()).toMatch(/HERALD_PROVIDERS_FILE \(.*providers\.json\): pool\.type: expected openai or anthropic/);
      } finally {
        await database.drop();
      }
    },
    PROCESS_START_MS,
  );
});
