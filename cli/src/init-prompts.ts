import { cancel, intro, isCancel, log, outro, password, select, spinner, text } from '@clack/prompts';
import { checkDatabase, checkModel, checkPlatformToken, checkRedisUrl, INIT_TOKENS, tokenShapeProblem } from './init-checks.ts';
import type { CheckResult, InitToken, ModelAnswer } from './init-checks.ts';
import { newApiToken } from './init-env.ts';
import type { InitAnswers } from './init-env.ts';
import { SetupError } from './setup-error.ts';

/** A prompt's answer, or the setup ends (Ctrl-C, Esc) with nothing written. */
function given<T>(answer: T | symbol): Exclude<T, symbol> {
  if (isCancel(answer) || typeof answer === 'symbol') {
    cancel('Nothing written.');
    throw new SetupError('herald init cancelled; nothing written', 130);
  }
  return answer as Exclude<T, symbol>;
}

/** Asks until the answer passes its live check (an empty answer skips, when allowed). */
async function askChecked<T>(ask: () => Promise<T | undefined>, check: (answer: T) => Promise<CheckResult>, what: string): Promise<T | undefined> {
  for (;;) {
    const answer = await ask();
    if (answer === undefined) return undefined;
    const progress = spinner();
    progress.start(`checking ${what}`);
    const problem = await check(answer);
    if (problem === null) {
      progress.stop(`${what}: ok`);
      return answer;
    }
    progress.error(`${what}: ${problem}`);
    log.warn('Try again, or press Ctrl-C to stop.');
  }
}

const optional = (value: string | undefined) => (value === undefined || value.trim() === '' ? undefined : value.trim());

async function askModel(): Promise<ModelAnswer | null> {
  const provider = given(
    await select({
      message: 'Which model should Herald use?',
      options: [
        { value: 'openai', label: 'OpenAI', hint: 'an API key' },
        { value: 'anthropic', label: 'Anthropic', hint: 'an API key' },
        { value: 'local', label: 'A local OpenAI-compatible server', hint: 'Ollama, vLLM, LM Studio' },
        { value: 'none', label: 'None yet', hint: 'set HERALD_MODEL later' },
      ],
    }),
  );
  if (provider === 'none') return null;
  const ask = async (): Promise<ModelAnswer> => {
    const baseURL =
      provider === 'local'
        ? given(
            await text({ message: 'Server URL', placeholder: 'http://127.0.0.1:11434/v1', validate: (v) => (/^https?:\/\/\S+$/.test(v ?? '') ? undefined : 'a URL like http://127.0.0.1:11434/v1') }),
          )
        : undefined;
    const model = given(
      await text({
        message: 'Model name',
        placeholder: provider === 'anthropic' ? 'claude-sonnet-4-5' : provider === 'openai' ? 'gpt-4.1-mini' : 'llama3.1',
        validate: (v) => (v?.trim() ? undefined : 'a model name'),
      }),
    );
    // A local server seldom needs a key: a plain question that Enter skips (a masked one wants an answer).
    const apiKey = optional(given(provider === 'local' ? await text({ message: 'API key (Enter for none)', defaultValue: '' }) : await password({ message: 'API key' })));
    return { provider: provider === 'anthropic' ? 'anthropic' : 'openai', model: model.trim(), apiKey, baseURL };
  };
  return (await askChecked(ask, checkModel, 'the model')) ?? null;
}

/** A platform's token, optional: one of the wrong kind is refused as typed, a right one checked live. */
async function askToken(token: InitToken): Promise<string | undefined> {
  const ask = async () =>
    optional(
      given(
        await text({
          message: `${token.question} (${token.prefix === undefined ? '' : `${token.prefix}..., `}Enter to skip)`,
          defaultValue: '',
          validate: (value) => (value === undefined || value.trim() === '' ? undefined : (tokenShapeProblem(token, value.trim()) ?? undefined)),
        }),
      ),
    );
  return askChecked(ask, (answer) => checkPlatformToken(token, answer), `the ${token.name}`);
}

/** Each platform's tokens in turn; one that needs another is asked only when that one was given. */
async function askTokens(): Promise<Record<string, string>> {
  const tokens: Record<string, string> = {};
  for (const token of INIT_TOKENS) {
    if (token.requires !== undefined && tokens[token.requires] === undefined) continue;
    const answer = await askToken(token);
    if (answer !== undefined) tokens[token.variable] = answer;
  }
  return tokens;
}

async function askDatabase(): Promise<{ databaseUrl: string | undefined; redisUrl: string | undefined }> {
  const where = given(
    await select({
      message: 'Where should the data live?',
      options: [
        { value: 'embedded', label: 'Embedded', hint: 'a Postgres Herald runs under ./.herald, nothing to install' },
        { value: 'own', label: 'My own Postgres (and Redis)', hint: 'DATABASE_URL, REDIS_URL' },
      ],
    }),
  );
  if (where === 'embedded') return { databaseUrl: undefined, redisUrl: undefined };
  const databaseUrl = await askChecked(
    async () =>
      given(
        await text({
          message: 'Postgres URL',
          placeholder: 'postgres://user:password@127.0.0.1:5432/herald',
          validate: (v) => (/^postgres(ql)?:\/\//.test(v ?? '') ? undefined : 'a URL like postgres://127.0.0.1:5432/herald'),
        }),
      ),
    checkDatabase,
    'Postgres',
  );
  const redisUrl = await askChecked(async () => optional(given(await text({ message: 'Redis URL (Enter for the queue on Postgres)', defaultValue: '' }))), checkRedisUrl, 'Redis');
  return { databaseUrl, redisUrl };
}

/** The interactive setup: each answer checked live before the next question. */
export async function askAnswers(): Promise<InitAnswers> {
  intro('herald init');
  const model = await askModel();
  const tokens = await askTokens();
  const { databaseUrl, redisUrl } = await askDatabase();
  const apiToken = newApiToken();
  log.info('Generated an API token (HERALD_API_TOKEN): the console and the CLI use it.');
  outro('Writing .env');
  return { model, tokens, databaseUrl, redisUrl, apiToken };
}
