import { DELIVERY_ONLY_FACTS, formatNamedChat, readStoredTarget } from '@herald/core';
import { defineDeliveryAdapter } from '../platform-adapter.ts';
import type { DeliveryAdapter } from '../platform-adapter.ts';
import { EmailSender } from './email-sender.ts';
import type { EmailSettings } from './email-sender.ts';

/**
 * E-mail behind the delivery half of the platform contract: cron reports over SMTP (nodemailer),
 * configured by HERALD_SMTP_URL and HERALD_MAIL_FROM. The stored target is the address as `chatId`
 * (so the outbox keeps one address's mails in order) and the subject as `title`.
 */
export const emailAdapter: DeliveryAdapter<EmailSettings> = defineDeliveryAdapter({
  name: 'email',
  facts: DELIVERY_ONLY_FACTS.email,
  settings: (platforms) => (platforms.email === null ? null : { ...platforms.email, allowedDomains: platforms.mailAllowedDomains }),
  createSender: (settings) => new EmailSender(settings),
  formatTarget: (chat) => formatNamedChat({ platform: 'email', chatId: chat.chatId }),
  readTarget: readStoredTarget,
  rateLimits: { maxMessageChars: 1_000_000, backoff: 'SMTP 4xx answers, retried with the outbox backoff; 5xx is final' },
});
