import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { checkDatabase, checkModel, checkPlatformToken, checkRedisUrl, INIT_TOKENS, tokenShapeProblem } from './init-checks.ts';
import type { CheckResult, InitToken, ModelAnswer } from './init-checks.ts';
import { newApiToken, writeEnvFile } from './init-env.ts';
import type { InitAnswers } from './init-env.ts';
import { SetupError, usageError } from './setup-error.ts';

/** A token flag's usage line: the token, the setting it becomes, the token it needs, other spellings. */
function tokenUsage(token: InitToken): string {
  const needed = INIT_TOKENS.find((other) => other.variable === token.requires);
  const notes = [token.variable, ...(needed ? [`needs --${needed.flag}`] : []), ...(token.aliases ?? []).map((alias) => `or --${alias}`)];
  return `  --${`${token.flag} T`.padEnd(34)}optional: ${token.question}${token.prefix === undefined ? '' : `, ${token.prefix}...`} (${notes.join('; ')})`;
}

export const INIT_USAGE = `usage: herald init [--non-interactive FLAGS] [--force]

Asks what Herald needs (a model, chat platforms, where the data lives), checks each answer live and
writes ./.env (mode 0600), which herald up and every other command read. Without a terminal, or
with --non-interactive, the answers come from flags:
  --provider openai|anthropic|local   the model's provider (local: an OpenAI-compatible server)
  --model NAME                        e.g. gpt-4.1-mini, claude-sonnet-4-5, llama3.1
  --api-key KEY                       the provider's key (a local server may need none)
  --base-url URL                      the server's URL (required for local)
${INIT_TOKENS.map(tokenUsage).join('\n')}
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

/** A flag per platform token init asks for (`--telegram-token`, `--slack-bot-token`...), and their aliases. */
const TOKEN_OPTIONS: Readonly<Record<string, { type: 'string' }>> = Object.fromEntries(
  INIT_TOKENS.flatMap((token) => [token.flag, ...(token.aliases ?? [])]).map((flag): [string, { type: 'string' }] => [flag, { type: 'string' }]),
);

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
  for (const token of INIT_TOKENS) {
    const value = answers.tokens[token.variable];
    if (value !== undefined) checks.push([`--${token.flag}: ${token.label} refused it`, checkPlatformToken(token, value)]);
  }
  if (answers.databaseUrl) checks.push(['--database-url: Postgres did not answer', checkDatabase(answers.databaseUrl)]);
  if (answers.redisUrl) checks.push(['--redis-url: Redis did not answer', checkRedisUrl(answers.redisUrl)]);
  for (const [what, check] of checks) {
    const problem = await check;
    if (problem !== null) throw new SetupError(`${what}: ${problem}`);
  }
}

/**
 * The token flags given, by the setting each is written to (parsed beside the typed flags: their
 * names come from the registry). A token of the wrong kind, or one given without the token it
 * needs, is a usage error before anything is checked live.
 */
function tokensOf(flags: Flags): Record<string, string> {
  const given: Readonly<Record<string, unknown>> = flags;
  const tokens: Record<string, string> = {};
  for (const token of INIT_TOKENS) {
    const value = [token.flag, ...(token.aliases ?? [])].map((flag) => given[flag]).find((text) => typeof text === 'string');
    if (typeof value !== 'string') continue;
    const problem = tokenShapeProblem(token, value);
    if (problem !== null) throw usageError(`--${token.flag}: ${problem}`, INIT_USAGE);
    tokens[token.variable] = value;
  }
  for (const token of INIT_TOKENS) {
    const needed = INIT_TOKENS.find((other) => other.variable === token.requires);
    if (tokens[token.variable] !== undefined && needed !== undefined && tokens[needed.variable] === undefined) {
      throw usageError(`--${token.flag}: needs --${needed.flag} too (${token.variable} is used only with ${needed.variable})`, INIT_USAGE);
    }
  }
  return tokens;
}

async function nonInteractive(flags: Flags, tokens: Record<string, string>): Promise<InitAnswers> {
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
