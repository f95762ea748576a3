import { probeDatabase } from '@herald/db';
import { probeRedis } from '@herald/queue';

/** What `herald init` asks about a model: the provider, the model, and how to reach it. */
export interface ModelAnswer {
  provider: 'openai' | 'anthropic';
  model: string;
  apiKey: string | undefined;
  baseURL: string | undefined;
}

const CHECK_MS = 10_000;
const DEFAULT_BASE = { openai: 'https://api.openai.com/v1', anthropic: 'https://api.anthropic.com' } as const;

/** null when it answered; otherwise why not, in words. */
export type CheckResult = string | null;

async function answered(response: Response): Promise<CheckResult> {
  if (response.ok) return null;
  const text = (await response.text()).slice(0, 200);
  return `${response.status} ${response.statusText}${text ? `: ${text}` : ''}`;
}

function failure(error: unknown): string {
  const cause = (error as { cause?: { code?: string; message?: string } }).cause;
  return cause?.code ?? cause?.message ?? (error as Error).message;
}

/** The model answers one tiny request with this key: the key, the model name and the server are right. */
export async function checkModel(answer: ModelAnswer): Promise<CheckResult> {
  const base = (answer.baseURL ?? DEFAULT_BASE[answer.provider]).replace(/\/+$/, '');
  const request: { url: string; headers: Record<string, string>; body: unknown } =
    answer.provider === 'openai'
      ? {
          url: `${base}/chat/completions`,
          headers: answer.apiKey ? { authorization: `Bearer ${answer.apiKey}` } : {},
          body: { model: answer.model, max_tokens: 1, messages: [{ role: 'user', content: 'ping' }] },
        }
      : {
          url: `${base}/v1/messages`,
          headers: { 'x-api-key': answer.apiKey ?? '', 'anthropic-version': '2023-06-01' },
          body: { model: answer.model, max_tokens: 1, messages: [{ role: 'user', content: 'ping' }] },
        };
  try {
    const response = await fetch(request.url, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...request.headers },
      body: JSON.stringify(request.body),
      signal: AbortSignal.timeout(CHECK_MS),
    });
    return await answered(response);
  } catch (error) {
    return `${base}: ${failure(error)}`;
  }
}

/** Telegram knows the bot token (getMe). */
export async function checkTelegram(token: string, apiRoot: string): Promise<CheckResult> {
  try {
    return await answered(await fetch(`${apiRoot.replace(/\/+$/, '')}/bot${token}/getMe`, { signal: AbortSignal.timeout(CHECK_MS) }));
  } catch (error) {
    return failure(error);
  }
}

/** Discord knows the bot token (GET /users/@me). */
export async function checkDiscord(token: string, apiBase: string): Promise<CheckResult> {
  try {
    return await answered(await fetch(`${apiBase.replace(/\/+$/, '')}/users/@me`, { headers: { authorization: `Bot ${token}` }, signal: AbortSignal.timeout(CHECK_MS) }));
  } catch (error) {
    return failure(error);
  }
}

export async function checkDatabase(url: string): Promise<CheckResult> {
  try {
    await probeDatabase(url, 5000);
    return null;
  } catch (error) {
    return (error as Error).message;
  }
}

export async function checkRedisUrl(url: string): Promise<CheckResult> {
  try {
    await probeRedis(url, 5000);
    return null;
  } catch (error) {
    return (error as Error).message;
  }
}
