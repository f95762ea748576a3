import { spawn } from 'node:child_process';
import { chmod, mkdtemp, readFile, rm, stat } from 'node:fs/promises';
import { existsSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI } from './support/fake-llm.ts';
import type { FakeLLM } from './support/fake-llm.ts';
import { startFakeDiscord } from './support/fake-discord.ts';
import type { FakeDiscord } from './support/fake-discord.ts';
import { startFakeTelegram } from './support/fake-telegram.ts';
import type { FakeTelegram } from './support/fake-telegram.ts';
import { APP_TOKEN, BOT_TOKEN, startFakeSlack } from './support/fake-slack.ts';
import type { FakeSlack } from './support/fake-slack.ts';
import { heraldOnTerminal } from './support/pty.ts';
import { createTestDatabase } from './support/test-database.ts';
import type { TestDatabase } from './support/test-database.ts';
import { HERALD_BIN, PROCESS_START_MS, stopProcess, waitFor } from './support/stack.ts';
import type { HeraldProcess } from './support/stack.ts';
import { freePort } from './support/ports.ts';

/** `herald ARGS` in dir with none of Herald's settings in the environment: only what .env says. */
function herald(dir: string, args: string[], extra: Record<string, string> = {}): HeraldProcess {
  const env: Record<string, string | undefined> = {};
  for (const name of ['PATH', 'HOME', 'USER']) env[name] = process.env[name];
  const child = spawn(process.execPath, [HERALD_BIN, ...args], { cwd: dir, env: { ...env, ...extra }, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | string>((resolve) => child.once('exit', (code, signal) => resolve(code ?? signal ?? -1)));
  return { child, output: () => output, exited };
}

async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

const DOWN = '\x1b[B';

describe('herald init', { timeout: 4 * PROCESS_START_MS }, () => {
  let model: FakeLLM;
  let telegram: FakeTelegram;
  let slack: FakeSlack;
  let discord: FakeDiscord;
  let database: TestDatabase;
  const dirs: string[] = [];
  const newDir = async () => {
    const dir = await mkdtemp(join(tmpdir(), 'herald-init-'));
    await chmod(dir, 0o755);
    dirs.push(dir);
    return dir;
  };
  beforeAll(async () => {
    model = await startFakeOpenAI();
    telegram = await startFakeTelegram();
    slack = await startFakeSlack();
    discord = await startFakeDiscord();
    database = await createTestDatabase();
  });
  afterAll(async () => {
    await model.close();
    await telegram.close();
    await slack.close();
    await discord.close();
    await database.drop();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
  });

  it('--non-interactive checks each answer live and refuses a bad one naming the flag, writing nothing', async () => {
    const dir = await newDir();
    const deadModel = herald(dir, ['init', '--non-interactive', '--provider', 'local', '--model', 'm', '--base-url', `http://127.0.0.1:${await closedPort()}/v1`]);
    expect(await deadModel.exited).toBe(1);
    expect(deadModel.output()).toMatch(/^herald: --api-key\/--model\/--base-url: the model did not answer: .*ECONNREFUSED/m);
    const badBot = herald(dir, ['init', '--non-interactive', '--provider', 'local', '--model', 'm', '--base-url', model.url, '--telegram-token', '123:wrong'], { TELEGRAM_API_ROOT: telegram.apiRoot });
    expect(await badBot.exited).toBe(1);
    expect(badBot.output()).toMatch(/^herald: --telegram-token: Telegram refused it: 404/m);
    // Slack answers 200 with ok: false for a token it does not know (auth.test, apps.connections.open).
    const local = ['init', '--non-interactive', '--provider', 'local', '--model', 'm', '--base-url', model.url];
    const slackEnv = { SLACK_API_URL: slack.url };
    const badSlackBot = herald(dir, [...local, '--slack-bot-token', 'xoxb-0-unknown'], slackEnv);
    expect(await badSlackBot.exited).toBe(1);
    expect(badSlackBot.output()).toMatch(/^herald: --slack-bot-token: Slack refused it: invalid_auth$/m);
    const badSlackApp = herald(dir, [...local, '--slack-token', BOT_TOKEN, '--slack-app-token', 'xapp-0-unknown'], slackEnv);
    expect(await badSlackApp.exited).toBe(1);
    expect(badSlackApp.output()).toMatch(/^herald: --slack-app-token: Slack refused it: invalid_auth$/m);
    // The bot and app tokens of the last run are checked at once, in either order.
    expect(slack.calls.map((call) => call.method).sort()).toEqual(['apps.connections.open', 'auth.test', 'auth.test']);
    // The wrong kind of token, or the app token alone, is a usage error before anything is asked.
    const swapped = herald(dir, [...local, '--slack-bot-token', APP_TOKEN], slackEnv);
    expect(await swapped.exited).toBe(2);
    expect(swapped.output()).toMatch(/^herald: --slack-bot-token: expected a Slack bot token starting xoxb-$/m);
    const appAlone = herald(dir, [...local, '--slack-app-token', APP_TOKEN], slackEnv);
    expect(await appAlone.exited).toBe(2);
    expect(appAlone.output()).toMatch(/^herald: --slack-app-token: needs --slack-bot-token too/m);
    expect(slack.calls).toHaveLength(3);
    const badDiscord = herald(dir, [...local, '--discord-token', 'MTE.wrong.token'], { DISCORD_API_BASE: discord.apiBase });
    expect(await badDiscord.exited).toBe(1);
    expect(badDiscord.output()).toMatch(/^herald: --discord-token: Discord refused it: 401/m);
    expect(badDiscord.output()).not.toContain('MTE.wrong.token');
    expect(existsSync(join(dir, '.env'))).toBe(false);
  });

  it('--non-interactive checks a Discord token with Discord and writes it', async () => {
    const dir = await newDir();
    const init = herald(dir, ['init', '--non-interactive', '--no-model', '--discord-token', discord.token], { DISCORD_API_BASE: discord.apiBase });
    expect(await init.exited, init.output()).toBe(0);
    expect(await readFile(join(dir, '.env'), 'utf8')).toContain(`DISCORD_BOT_TOKEN=${discord.token}\n`);
    expect(init.output()).not.toContain(discord.token);
  });

  it('--non-interactive writes a .env (0600) that `herald up` reads: the API answers with its token through the model it names', async () => {
    const dir = await newDir();
    const init = herald(
      dir,
      [
        ...['init', '--non-interactive', '--provider', 'local', '--model', 'gpt-test', '--base-url', model.url, '--database-url', database.url, '--api-token', 'init-token-123456'],
        ...['--slack-bot-token', BOT_TOKEN, '--slack-app-token', APP_TOKEN],
      ],
      { SLACK_API_URL: slack.url },
    );
    expect(await init.exited).toBe(0);
    expect(init.output()).toContain(`wrote ${join(dir, '.env')} (mode 0600)`);
    expect(init.output()).not.toContain('init-token-123456');
    expect((await stat(join(dir, '.env'))).mode & 0o777).toBe(0o600);
    const env = await readFile(join(dir, '.env'), 'utf8');
    expect(env).toContain('HERALD_MODEL=openai/gpt-test\n');
    expect(env).toContain(`OPENAI_BASE_URL=${model.url}\n`);
    expect(env).toContain(`DATABASE_URL=${database.url}\n`);
    expect(env).toContain('HERALD_API_TOKEN=init-token-123456\n');
    expect(env).toContain(`SLACK_BOT_TOKEN=${BOT_TOKEN}\n`);
    expect(env).toContain(`SLACK_APP_TOKEN=${APP_TOKEN}\n`);
    expect(init.output()).not.toContain(BOT_TOKEN);
    const again = herald(dir, ['init', '--non-interactive', '--no-model']);
    expect(await again.exited).toBe(1);
    expect(again.output()).toMatch(/\.env exists: herald init --force replaces it/);

    const port = String(await freePort());
    const up = herald(dir, ['up'], { PORT: port, HERALD_METRICS_PORT: '0', LOG_FORMAT: 'json', SLACK_API_URL: slack.url });
    try {
      await waitFor(async () => up.output().includes('Herald is up'), { timeoutMs: PROCESS_START_MS, what: 'herald up' });
      expect(up.output()).toContain('chosen because DATABASE_URL is set');
      // The Slack tokens are read from .env under the names the Slack settings use: Socket Mode connects.
      await waitFor(async () => slack.openSockets() === 1, { timeoutMs: 30_000, what: 'the Slack socket' });
      const send = (token: string) =>
        fetch(`http://127.0.0.1:${port}/v1/messages?wait=30`, {
          method: 'POST',
          headers: { 'content-type': 'application/json', authorization: `Bearer ${token}` },
          body: JSON.stringify({ chat_id: 'init', user_id: 'ada', text: 'hello from init' }),
        });
      expect((await send('wrong-token-000')).status).toBe(401);
      const answer = await send('init-token-123456');
      expect(answer.status).toBe(200);
      expect(((await answer.json()) as { reply: { text: string } }).reply.text).toBe('echo: hello from init');
    } finally {
      await stopProcess(up, 'SIGTERM');
    }
  });

  it('interactive: asks on a terminal, checks each answer live (asking again after a failure), writes .env', async () => {
    const dir = await newDir();
    const init = heraldOnTerminal(['init'], { TELEGRAM_API_ROOT: telegram.apiRoot, SLACK_API_URL: slack.url }, { cwd: dir });
    // Each question is looked for after the last answer typed (a question asked again appears twice).
    let typedAt = 0;
    const step = async (question: string, keys: string) => {
      await init.until(question, { timeoutMs: PROCESS_START_MS, from: typedAt });
      // The prompt draws itself, then listens: a key in between would be lost.
      await new Promise((resolve) => setTimeout(resolve, 300));
      typedAt = init.screen().length;
      init.type(keys);
      return typedAt;
    };
    await step('Which model should Herald use?', `${DOWN}${DOWN}\r`);
    await step('Server URL', `http://127.0.0.1:${await closedPort()}/v1\r`);
    await step('Model name', 'gpt-test\r');
    let from = await step('API key', '\r');
    await init.until(/the model: .*ECONNREFUSED/, { from });
    await init.until('Try again', { from });
    from = await step('Server URL', `${model.url}\r`);
    from = await step('Model name', 'gpt-test\r');
    from = await step('API key', '\r');
    await init.until('the model: ok', { from });
    from = await step('Telegram bot token', `${telegram.token}\r`);
    await init.until('the Telegram token: ok', { from });
    from = await step('Discord bot token', '\r');
    from = await step('Slack bot token', 'xoxb-0-unknown\r');
    await init.until('the Slack bot token: invalid_auth', { from });
    from = await step('Slack bot token', `${BOT_TOKEN}\r`);
    await init.until('the Slack bot token: ok', { from });
    from = await step('Slack app-level token for Socket Mode', `${APP_TOKEN}\r`);
    await init.until('the Slack app token: ok', { from });
    from = await step('Where should the data live?', `${DOWN}\r`);
    from = await step('Postgres URL', `${database.url}\r`);
    await init.until('Postgres: ok', { from });
    await step('Redis URL', '\r');
    expect(await init.exited).toBe(0);
    expect((await stat(join(dir, '.env'))).mode & 0o777).toBe(0o600);
    const env = await readFile(join(dir, '.env'), 'utf8');
    expect(env).toContain('HERALD_MODEL=openai/gpt-test\n');
    expect(env).toContain(`OPENAI_BASE_URL=${model.url}\n`);
    expect(env).toContain(`TELEGRAM_BOT_TOKEN=${telegram.token}\n`);
    expect(env).toContain(`SLACK_BOT_TOKEN=${BOT_TOKEN}\nSLACK_APP_TOKEN=${APP_TOKEN}\n`);
    expect(env).toContain(`DATABASE_URL=${database.url}\n`);
    expect(env).toMatch(/^HERALD_API_TOKEN=[\w-]{32}$/m);
    expect(env).not.toContain('REDIS_URL=');
  });
});
