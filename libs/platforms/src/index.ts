export { splitMarkdown } from './markdown-split.ts';
export { markdownToTelegramHtml, escapeHtml } from './telegram/telegram-format.ts';
export { TelegramSender, telegramChunks, classifyTelegramError, TELEGRAM_LIMIT } from './telegram/telegram-sender.ts';
export type { TelegramChunk } from './telegram/telegram-sender.ts';
export { TelegramIngress, normalizeTelegramUpdate, isUpdate, botIdOf } from './telegram/telegram-ingress.ts';
export type { TelegramBotIdentity, TelegramIngressOptions, TelegramUpdateOutcome } from './telegram/telegram-ingress.ts';
export { handleChatInbound, isAllowed, REFUSAL_TEXT } from './chat-inbound.ts';
export type { ChatInbound, ChatInboundDependencies, ChatInboundOutcome } from './chat-inbound.ts';
export { LeasedTask } from './leased-task.ts';
export type { LeasedTaskOptions } from './leased-task.ts';
export { TypingIndicator } from './typing-indicator.ts';
export { DraftStream, DRAFT_CURSOR, DEFAULT_PACING } from './draft-stream.ts';
export type { DraftPacing, DraftStreamOptions } from './draft-stream.ts';
export { DraftStreams } from './draft-streams.ts';
export type { DraftStreamsOptions } from './draft-streams.ts';
export { DiscordSender, discordNonce, classifyDiscordError, DISCORD_LIMIT } from './discord/discord-sender.ts';
export {
  DiscordIngress,
  normalizeDiscordMessage,
  discordBotIdOf,
  discordCommandDefinitions,
  deployDiscordCommands,
} from './discord/discord-ingress.ts';
export type { DiscordIngressOptions } from './discord/discord-ingress.ts';
export { defineAdapter, defineDeliveryAdapter } from './platform-adapter.ts';
export type { AnyDeliveryAdapter, AnyPlatformAdapter, ConfiguredCalls, DeliveryAdapter, DeliveryAdapterSpec, InboundDependencies, InboundHandle, PlatformAdapter, PlatformAdapterSpec, PlatformWebhook, RateLimitRules, WebhookAnswer } from './platform-adapter.ts';
export { DELIVERY_ADAPTERS, PLATFORM_ADAPTERS } from './platform-adapters.ts';
export { emailAdapter } from './email/email-adapter.ts';
export { EmailSender, classifySmtpError } from './email/email-sender.ts';
export type { EmailSettings } from './email/email-sender.ts';
export { mailBody } from './email/email-format.ts';
export { telegramAdapter } from './telegram/telegram-adapter.ts';
export type { TelegramInbound } from './telegram/telegram-adapter.ts';
export { discordAdapter } from './discord/discord-adapter.ts';
export { verifyTelegramSecret } from './telegram/telegram-ingress.ts';
export { telegramWebhook } from './telegram/telegram-webhook.ts';
export { slackAdapter } from './slack/slack-adapter.ts';
export type { SlackInbound } from './slack/slack-adapter.ts';
export { SlackIngress } from './slack/slack-ingress.ts';
export { slackWebhooks } from './slack/slack-webhooks.ts';
export type { SlackEnvelopeKind, SlackOutcome } from './slack/slack-ingress.ts';
export { SlackSender, SLACK_LIMIT, WORKING_REACTION, classifySlackError, slackWebClient } from './slack/slack-sender.ts';
export { markdownToSlackMrkdwn, slackTextToPlain } from './slack/slack-format.ts';
export { matchSlackSignature, signSlackBody, verifySlackSignature } from './slack/slack-signature.ts';
export type { SlackEventsApp } from './slack/slack-webhooks.ts';
export { SlackRateGate, SLACK_METHOD_SPACING } from './slack/slack-rate-gate.ts';
