// E-mail's public names, reached as @herald/platforms/email, as every platform's are from its own
// folder; the rest of Herald reaches it through DELIVERY_ADAPTERS.
export { emailAdapter } from './email-adapter.ts';
export { EmailSender, classifySmtpError } from './email-sender.ts';
export type { EmailSettings } from './email-sender.ts';
export { mailBody } from './email-format.ts';
