export { splitMarkdown } from './markdown-split.ts';
export { markdownToTelegramHtml, escapeHtml } from './telegram-format.ts';
export { TelegramSender, telegramChunks, classifyTelegramError, TELEGRAM_LIMIT } from './telegram-sender.ts';
export type { TelegramChunk } from './telegram-sender.ts';
export { TelegramIngress, normalizeTelegramUpdate, isUpdate, botIdOf } from './telegram-ingress.ts';
export type { TelegramBotIdentity, TelegramIngressOptions, TelegramUpdateOutcome } from './telegram-ingress.ts';
export { handleChatInbound, isAllowed, REFUSAL_TEXT } from './chat-inbound.ts';
export type { ChatInbound, ChatInboundDependencies, ChatInboundOutcome } from './chat-inbound.ts';
export { LeasedTask } from './leased-task.ts';
export type { LeasedTaskOptions } from './leased-task.ts';
export { TypingIndicator } from './typing-indicator.ts';
export { DiscordSender, discordNonce, classifyDiscordError, DISCORD_LIMIT } from './discord-sender.ts';
export {
  DiscordIngress,
  normalizeDiscordMessage,
  discordBotIdOf,
  discordCommandDefinitions,
  deployDiscordCommands,
} from './discord-ingress.ts';
export type { DiscordIngressOptions } from './discord-ingress.ts';
