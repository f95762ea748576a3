import { randomBytes } from 'node:crypto';
import { chmod, writeFile } from 'node:fs/promises';
import { INIT_TOKENS } from './init-checks.ts';
import type { ModelAnswer } from './init-checks.ts';

/** Everything `herald init` settles, written to .env. */
export interface InitAnswers {
  model: ModelAnswer | null;
  /** The platform tokens given, by the setting each is written to (the registry's `setupTokens`). */
  tokens: Readonly<Record<string, string>>;
  /** undefined: embedded Postgres. */
  databaseUrl: string | undefined;
  /** undefined: the queue on Postgres. */
  redisUrl: string | undefined;
  apiToken: string;
}

export function newApiToken(): string {
  return randomBytes(24).toString('base64url');
}

const KEY = { openai: 'OPENAI_API_KEY', anthropic: 'ANTHROPIC_API_KEY' } as const;
const BASE = { openai: 'OPENAI_BASE_URL', anthropic: 'ANTHROPIC_BASE_URL' } as const;

/** A value as dotenv reads it back: quoted when it holds anything but plain URL and token characters. */
function value(text: string): string {
  return /^[\w@%+=:,./?&~-]*$/.test(text) ? text : `"${text.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/** The .env text: one line per setting, comments saying what each choice means. */
export function envText(answers: InitAnswers): string {
  const lines = ['# Written by `herald init`. The environment wins over this file. Secrets: keep it private (mode 0600).'];
  const set = (name: string, text: string | undefined) => {
    if (text !== undefined && text !== '') lines.push(`${name}=${value(text)}`);
  };
  if (answers.model) {
    set('HERALD_MODEL', `${answers.model.provider}/${answers.model.model}`);
    set(KEY[answers.model.provider], answers.model.apiKey);
    set(BASE[answers.model.provider], answers.model.baseURL);
  }
  for (const { variable } of INIT_TOKENS) set(variable, answers.tokens[variable]);
  if (answers.databaseUrl === undefined) lines.push('# No DATABASE_URL: an embedded Postgres under ./.herald.');
  set('DATABASE_URL', answers.databaseUrl);
  if (answers.redisUrl === undefined) lines.push('# No REDIS_URL: the queue runs on Postgres.');
  set('REDIS_URL', answers.redisUrl);
  lines.push('# The API and the console ask for this token; HOST keeps the API on this machine.');
  set('HERALD_API_TOKEN', answers.apiToken);
  set('HOST', '127.0.0.1');
  return `${lines.join('\n')}\n`;
}

/** Writes the file readable by its owner only (chmod too: an existing file keeps its mode otherwise). */
export async function writeEnvFile(path: string, answers: InitAnswers): Promise<void> {
  await writeFile(path, envText(answers), { mode: 0o600 });
  await chmod(path, 0o600);
}
