import { CHAT_PLATFORMS, PLATFORM_FACTS } from '@herald/core';
import type { ChatPlatform, SetupToken } from '@herald/core';
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

/** A token `herald init` asks for, with the platform it belongs to. */
export interface InitToken extends SetupToken {
  platform: ChatPlatform;
  /** The platform's name people read. */
  label: string;
}

/** Every platform's setup tokens, in the registry's order: the prompts, the flags and the .env lines. */
export const INIT_TOKENS: readonly InitToken[] = CHAT_PLATFORMS.flatMap((platform) =>
  (PLATFORM_FACTS[platform].setupTokens ?? []).map((token) => ({ ...token, platform, label: PLATFORM_FACTS[platform].label })),
);

/** Why a token cannot be one of its kind before it is sent anywhere (the settings refuse it too), or null. */
export function tokenShapeProblem(token: InitToken, value: string): string | null {
  return token.prefix === undefined || value.startsWith(token.prefix) ? null : `expected a ${token.name} starting ${token.prefix}`;
}

/**
 * The platform knows the token: its adapter asks it, at the API root the environment names (a
 * test's fake), else the real one. The adapters and their SDKs load only when a token is checked.
 */
export async function checkPlatformToken(token: InitToken, value: string): Promise<CheckResult> {
  const { PLATFORM_ADAPTERS } = await import('@herald/platforms');
  const adapter = PLATFORM_ADAPTERS[token.platform];
  return adapter.checkToken ? adapter.checkToken(value, process.env, token.variable) : null;
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
