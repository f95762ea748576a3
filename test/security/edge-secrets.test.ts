import { describe, expect, it } from 'vitest';
import { Api, GrammyError, HttpError } from 'grammy';
import { CHAT_PLATFORMS, ConfigError, createLogger, loadConfig, PLATFORM_FACTS } from '@herald/core';

const BOT_TOKEN = '123456789:AAHsecretTokenPart_abcdefghijklmnopqr';
const SECRET = BOT_TOKEN.split(':')[1] ?? '';
const DB_PASSWORD = 'pg-Pa55word-nobody-may-see';

/** A logger writing into an array, as the process would write to stdout. */
function capturedLogger() {
  const lines: string[] = [];
  const logger = createLogger({ level: 'debug', service: 'test', destination: { write: (line) => lines.push(line) } });
  return { logger, text: () => lines.join('') };
}

describe('secrets never printed (issue 17, point 10)', () => {
  it.each([
    ['DATABASE_URL', `postgres://herald:${DB_PASSWORD}@db:notaport/herald`],
    ['DATABASE_URL', `mysql://root:${DB_PASSWORD}@db/herald`],
    ['REDIS_URL', `http://:${DB_PASSWORD}@redis:6379`],
    ['OPENAI_BASE_URL', `ftp://user:${DB_PASSWORD}@models`],
    ['TELEGRAM_BOT_TOKEN', `${DB_PASSWORD} not a token`],
  ])('a config error names %s, not its value', (name, value) => {
    let message = '';
    try {
      loadConfig({ [name]: value });
    } catch (error) {
      expect(error).toBeInstanceOf(ConfigError);
      message = (error as Error).message;
    }
    expect(message.startsWith(`${name}: `)).toBe(true);
    expect(message).not.toContain(DB_PASSWORD);
  });

  it('redacts a bot token inside a real grammy HttpError (request URL in the nested error)', async () => {
    // Nothing listens on port 1: grammy fails the request and its error carries the URL with the token.
    const api = new Api(BOT_TOKEN, { apiRoot: 'http://127.0.0.1:1' });
    const error = await api.getMe().then(
      () => undefined,
      (failure: unknown) => failure,
    );
    expect(error).toBeInstanceOf(HttpError);
    const { logger, text } = capturedLogger();
    logger.child({ component: 'telegram' }).warn({ err: error, wrapped: { cause: error, url: `https://api.telegram.org/bot${BOT_TOKEN}/getUpdates` } }, 'telegram getUpdates failed');
    expect(text()).toContain('telegram getUpdates failed');
    expect(text()).toContain('bot123456789:[redacted]');
    expect(text()).not.toContain(SECRET);
  });

  it('redacts tokens in nested errors, error messages, URL passwords and headers at any depth', () => {
    const { logger, text } = capturedLogger();
    const apiError = new GrammyError(
      `Call to 'sendMessage' failed! (400: Bad Request) at https://api.telegram.org/bot${BOT_TOKEN}/sendMessage`,
      { ok: false, error_code: 400, description: 'Bad Request' },
      'sendMessage',
      {},
    );
    const outer = new Error('delivery failed', { cause: apiError });
    logger.error(
      {
        err: outer,
        attempt: {
          request: {
            url: `postgres://herald:${DB_PASSWORD}@db:5432/herald`,
            headers: { Authorization: `Bearer ${DB_PASSWORD}`, 'X-Api-Key': DB_PASSWORD, accept: 'application/json' },
          },
          discord: `Bot ${DB_PASSWORD}`,
        },
        list: [{ deep: [{ deeper: `redis://:${DB_PASSWORD}@redis:6379/0` }] }],
      },
      `post to https://api.telegram.org/bot${BOT_TOKEN}/sendMessage failed`,
    );
    const out = text();
    expect(out).not.toContain(SECRET);
    expect(out).not.toContain(DB_PASSWORD);
    // What is not a secret stays readable for the operator.
    expect(out).toContain('postgres://herald:[redacted]@db:5432/herald');
    expect(out).toContain('application/json');
    expect(out).toContain('delivery failed');
    expect(out).toContain("Call to 'sendMessage' failed!");
  });

  it("redacts every platform's secret settings, each account's too, and its webhooks' secret headers, as the registry names them", () => {
    for (const platform of CHAT_PLATFORMS) {
      const { logger, text } = capturedLogger();
      const facts = PLATFORM_FACTS[platform];
      const settings = Object.fromEntries(facts.secretSettings.map((field) => [field, `${field}-in-the-clear`] as const));
      const headers = Object.fromEntries(facts.secretHeaders.map((header) => [header, 'header-in-the-clear'] as const));
      logger.info({ config: { platforms: { [platform]: settings, accounts: { [platform]: [settings] } } }, req: { headers } }, 'config');
      expect(text()).toContain('[redacted]');
      expect(text()).not.toContain('-in-the-clear');
    }
  });

  it('still redacts the known field names (token, apiKey, authorization)', () => {
    const { logger, text } = capturedLogger();
    logger.info({ token: 'tok-abcdef', config: { model: { endpoint: { apiKey: 'sk-live-abcdef' } } }, req: { headers: { authorization: 'x' } } }, 'fields');
    expect(text()).not.toContain('tok-abcdef');
    expect(text()).not.toContain('sk-live-abcdef');
  });
});
