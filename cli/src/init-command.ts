import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { PLATFORM_FACTS } from '@herald/core';
import type { ChatPlatform } from '@herald/core';
import { checkDatabase, checkModel, checkPlatformToken, checkRedisUrl, TOKEN_PLATFORMS } from './init-checks.ts';
import type { CheckResult, ModelAnswer } from './init-checks.ts';
import { newApiToken, writeEnvFile } from './init-env.ts';
import type { InitAnswers } from './init-env.ts';
import { SetupError, usageError } from './setup-error.ts';

export const INIT_USAGE = `usage: herald init [--non-interactive FLAGS] [--force]

Asks what Herald needs (a model, chat platforms, where the data lives), checks each answer live and
writes ./.env (mode 0600), which herald up and every other command read. Without a terminal, or
with --non-interactive, the answers come from flags:
  --provider openai|anthropic|local   the model's provider (local: an OpenAI-compatible server)
  --model NAME                        e.g. gpt-4.1-mini, claude-sonnet-4-5, llama3.1
  --api-key KEY                       the provider's key (a local server may need none)
  --base-url URL                      the server's URL (required for local)
  ${TOKEN_PLATFORMS.map((platform) => `--${platform}-token T`).join(', ')}   optional bot tokens
  --database-url URL                  your own Postgres (default: an embedded one)
  --redis-url URL                     your own Redis (default: the queue on Postgres)
  --api-token T                       the API token (default: generated)
  --no-model                          no model yet (messages get a note on how to set one)
  --force                             replace an existing .env`;

const OPTIONS = {
  'non-interactive': { type: 'boolean' },
  provider: { type: 'string' },
  model: { type: 'string' },
  'api-key': { type: 'string' },
  'base-url': { type: 'string' },
  'database-url': { type: 'string' },
  'redis-url': { type: 'string' },
  'api-token': { type: 'string' },
  'no-model': { type: 'boolean' },
  force: { type: 'boolean' },
} as const;

/** A bot token flag per platform init asks for (`--<platform>-token`). */
const TOKEN_OPTIONS: Readonly<Record<string, { type: 'string' }>> = Object.fromEntries(TOKEN_PLATFORMS.map((platform): [string, { type: 'string' }] => [`${platform}-token`, { type: 'string' }]));

type Flags = ReturnType<typeof parseArgs<{ options: typeof OPTIONS; allowPositionals: false }>>['values'];

function modelFromFlags(flags: Flags): ModelAnswer | null {
  if (flags['no-model'] === true) return null;
  const provider = flags.provider;
  if (provider !== 'openai' && provider !== 'anthropic' && provider !== 'local') throw usageError('--provider: expected openai, anthropic or local (or --no-model)', INIT_USAGE);
  if (flags.model === undefined) throw usageError('--model: the model name is required', INIT_USAGE);
  if (provider === 'local' && flags['base-url'] === undefined) throw usageError('--base-url: required with --provider local', INIT_USAGE);
  if (provider !== 'local' && flags['api-key'] === undefined && flags['base-url'] === undefined) throw usageError(`--api-key: required with --provider ${provider}`, INIT_USAGE);
  return { provider: provider === 'local' ? 'openai' : provider, model: flags.model, apiKey: flags['api-key'], baseURL: flags['base-url'] };
}

/** Runs every live check; the first failure names its flag. */
async function checkAll(answers: InitAnswers): Promise<void> {
  const checks: [string, Promise<CheckResult>][] = [];
  if (answers.model) checks.push(['--api-key/--model/--base-url: the model did not answer', checkModel(answers.model)]);
  for (const platform of TOKEN_PLATFORMS) {
    const token = answers.tokens[platform];
    if (token) checks.push([`--${platform}-token: ${PLATFORM_FACTS[platform].label} refused it`, checkPlatformToken(platform, token)]);
  }
  if (answers.databaseUrl) checks.push(['--database-url: Postgres did not answer', checkDatabase(answers.databaseUrl)]);
  if (answers.redisUrl) checks.push(['--redis-url: Redis did not answer', checkRedisUrl(answers.redisUrl)]);
  for (const [what, check] of checks) {
    const problem = await check;
    if (problem !== null) throw new SetupError(`${what}: ${problem}`);
  }
}

/** The token flags given, by platform (parsed beside the typed flags: their names come from the registry). */
function tokensOf(flags: Flags): Partial<Record<ChatPlatform, string>> {
  const given: Readonly<Record<string, unknown>> = flags;
  return Object.fromEntries(
    TOKEN_PLATFORMS.flatMap((platform): [ChatPlatform, string][] => {
      const token = given[`${platform}-token`];
      return typeof token === 'string' ? [[platform, token]] : [];
    }),
  );
}

async function nonInteractive(flags: Flags, tokens: Partial<Record<ChatPlatform, string>>): Promise<InitAnswers> {
  const answers: InitAnswers = {
    model: modelFromFlags(flags),
    tokens,
    databaseUrl: flags['database-url'],
    redisUrl: flags['redis-url'],
    apiToken: flags['api-token'] ?? newApiToken(),
  };
  await checkAll(answers);
  return answers;
}

/** `herald init`: the guided setup, or its flags for scripts; writes ./.env. */
export async function runInit(argv: string[]): Promise<void> {
  let flags: Flags;
  try {
    flags = parseArgs({ args: argv, options: { ...OPTIONS, ...TOKEN_OPTIONS } as typeof OPTIONS, allowPositionals: false }).values;
  } catch (error) {
    throw usageError((error as Error).message, INIT_USAGE);
  }
  const path = resolve('.env');
  if (existsSync(path) && flags.force !== true) throw new SetupError(`${path} exists: herald init --force replaces it (or edit it)`);
  const interactive = flags['non-interactive'] !== true && process.stdin.isTTY === true;
  const answers = interactive ? await (await import('./init-prompts.ts')).askAnswers() : await nonInteractive(flags, tokensOf(flags));
  await writeEnvFile(path, answers);
  process.stdout.write(
    `wrote ${path} (mode 0600)\nAPI token: ${answers.apiToken.slice(0, 4)}… (HERALD_API_TOKEN in .env; the console asks for it)\nnext: npm start (or npx herald up), then npx herald chat or the console at http://127.0.0.1:8080/ui/\n`,
  );
}
