import { createHash } from 'node:crypto';
import nodemailer from 'nodemailer';
import type { Transporter } from 'nodemailer';
import type SMTPTransport from 'nodemailer/lib/smtp-transport/index.js';
import type Mail from 'nodemailer/lib/mailer/index.js';
import { DELIVERY_ONLY_FACTS } from '@herald/core';
import type { EmailConfig } from '@herald/core';
import { DeliveryError } from '@herald/delivery';
import type { DeliveryReceipt, OutboundDelivery, OutboundSender } from '@herald/delivery';
import { mailBody } from './email-format.ts';

/** What the sender is configured with: the SMTP server, the From, and where mail may go. */
export interface EmailSettings extends EmailConfig {
  /** HERALD_MAIL_ALLOWED_DOMAINS, checked again at send (a job saved before the list changed). */
  allowedDomains: readonly string[];
}

/** Longest a report's subject may be; a job's name is at most 200 characters, a failure notice a little more. */
const SUBJECT_MAX = 250;

/** How nodemailer reports an SMTP failure: the server's code and line, or a socket error code. */
interface SmtpFailure {
  message?: string;
  code?: string;
  responseCode?: number;
  response?: string;
}

/**
 * What the consumer does with a failed send. A server's answer is final only when it is permanent
 * (5xx: unknown mailbox, refused relay, policy); a 4xx (greylisting, a full queue) is retried with
 * the outbox's backoff. Without an answer (a connection that dropped, a timeout) the server may or
 * may not have taken the mail: retried, marked ambiguous; the same Message-ID lets readers and
 * servers recognise a repeat.
 */
export function classifySmtpError(error: unknown): DeliveryError {
  const failure = (error ?? {}) as SmtpFailure;
  // A refused login (535) is the deployment's settings, not this mail: retried, so mail flows again
  // once HERALD_SMTP_URL is fixed, and the reason says which. Its text never holds the password.
  if (failure.code === 'EAUTH') return new DeliveryError(`SMTP login failed: ${failure.message ?? ''}`, { retryable: true, cause: error });
  const code = failure.responseCode;
  if (typeof code === 'number') {
    const reason = (failure.response ?? failure.message ?? '').replace(/\s+/g, ' ').trim().slice(0, 500);
    return new DeliveryError(`SMTP server refused the mail (${code}): ${reason}`, { retryable: code < 500, cause: error });
  }
  return new DeliveryError(`SMTP send failed: ${failure.message ?? String(error)}`, { retryable: true, ambiguous: true, cause: error });
}

/** The domain a Message-ID is minted under: the From's. */
function fromDomain(from: string): string {
  return /@([^>\s]+)>?\s*$/.exec(from)?.[1] ?? 'herald.invalid';
}

/**
 * Sends a report as one mail per outbox row (one recipient: each address of a target is its own
 * row, retried and failed on its own). One SMTP connection per send: reports are rare and a pool
 * would hold connections the server may close at will.
 */
export class EmailSender implements OutboundSender {
  readonly #transport: Transporter<SMTPTransport.SentMessageInfo>;
  readonly #from: string;
  readonly #allowedDomains: readonly string[];

  constructor(settings: EmailSettings) {
    // The URL carries the password: it goes to nodemailer only, whose own logging is off.
    const options: SMTPTransport.Options = { url: settings.smtpUrl, logger: false, debug: false, connectionTimeout: 10_000, greetingTimeout: 10_000, socketTimeout: 20_000 };
    this.#transport = nodemailer.createTransport(options);
    this.#from = settings.from;
    this.#allowedDomains = settings.allowedDomains;
  }

  /** The mail for one row, with the files the row carries (a cron report's) as its attachments. */
  message(item: OutboundDelivery, to: string): Mail.Options {
    const title = (item.target.title ?? 'Herald report').replace(/[\r\n]+/g, ' ').slice(0, SUBJECT_MAX);
    const body = mailBody(item.text, title);
    const digest = createHash('sha256').update(item.idempotencyKey).digest('hex').slice(0, 32);
    const mail: Mail.Options = {
      from: this.#from,
      to,
      subject: title,
      text: body.text,
      html: body.html,
      messageId: `<${digest}@${fromDomain(this.#from)}>`,
      disableFileAccess: true,
      disableUrlAccess: true,
    };
    const files = item.attachedFiles ?? [];
    // Bytes only (never a path or URL nodemailer would open), typed by the sniffed type, not the name.
    if (files.length > 0) mail.attachments = files.map((file) => ({ filename: file.name, content: file.bytes, contentType: file.mime, contentDisposition: 'attachment' as const }));
    return mail;
  }

  /** The row's address, refused for good when it is no address or lies outside the allowed domains. */
  #recipient(item: OutboundDelivery): string {
    const facts = DELIVERY_ONLY_FACTS.email;
    const check = facts.readAddress(item.target.chatId ?? '');
    if ('problem' in check) throw new DeliveryError(check.problem, { retryable: false });
    if (!facts.addressAllowed(check.address, this.#allowedDomains)) {
      throw new DeliveryError(`${check.address} is outside HERALD_MAIL_ALLOWED_DOMAINS (${this.#allowedDomains.join(', ')})`, { retryable: false });
    }
    return check.address;
  }

  async send(item: OutboundDelivery, signal: AbortSignal): Promise<DeliveryReceipt> {
    // An earlier attempt was accepted but died before the receipt was stored: do not mail again.
    const sent = item.progress.partsSent[0];
    if (sent !== undefined) return { messageIds: [sent] };
    const to = this.#recipient(item);
    await item.progress.beginPart(0, null);
    let info: SMTPTransport.SentMessageInfo;
    try {
      info = await abortable(this.#transport.sendMail(this.message(item, to)), signal);
    } catch (error) {
      const classified = classifySmtpError(error);
      // An answer from the server means it did not take the mail: nothing is in flight any more.
      if (!classified.ambiguous) await item.progress.clearInFlight();
      throw classified;
    }
    await item.progress.partSent(0, info.messageId);
    return { messageIds: [info.messageId], response: info.response.slice(0, 500) };
  }
}

/** The send, or the abort of the consumer's deadline (the SMTP timeouts end the socket soon after). */
function abortable<T>(work: Promise<T>, signal: AbortSignal): Promise<T> {
  if (signal.aborted) return Promise.reject(signal.reason as Error);
  return new Promise<T>((resolve, reject) => {
    const onAbort = () => reject(signal.reason as Error);
    signal.addEventListener('abort', onAbort, { once: true });
    work.then(resolve, reject).finally(() => signal.removeEventListener('abort', onAbort));
  });
}
