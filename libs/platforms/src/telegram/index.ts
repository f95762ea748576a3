// Telegram's public names, reached as @herald/platforms/telegram (the package's entry names no
// platform: test/platform-names.test.ts). The rest of Herald reaches Telegram through its adapter
// in the registry (PLATFORM_ADAPTERS); the tests and benchmarks that drive Telegram itself import here.
export { markdownToTelegramHtml, escapeHtml } from './telegram-format.ts';
export { TelegramSender, telegramChunks, classifyTelegramError, TELEGRAM_LIMIT } from './telegram-sender.ts';
export type { TelegramChunk } from './telegram-sender.ts';
export { TelegramIngress, normalizeTelegramUpdate, isUpdate, botIdOf, verifyTelegramSecret } from './telegram-ingress.ts';
export type { TelegramBotIdentity, TelegramIngressOptions, TelegramUpdateOutcome } from './telegram-ingress.ts';
export { telegramAdapter } from './telegram-adapter.ts';
export type { TelegramInbound } from './telegram-adapter.ts';
export { telegramWebhook } from './telegram-webhook.ts';
