import type { Db } from '@herald/db';
import { enqueueOutbound } from '@herald/delivery';
import { redeemLinkCode } from '@herald/people';

/**
 * `/link CODE`, the same on every chat platform: links the identity that sends it to the person a
 * code was made for (`herald people link-code ID`, POST /v1/people/:id/link-code). It is handled
 * where a chat message arrives, before any session: the code is never stored as a message, never
 * reaches a model, and a platform added later gets it by going through handleChatInbound. It is
 * listed with the other chat commands (CHAT_COMMANDS), so /help and the platforms' command menus show it.
 */

/** The code of a `/link` message ('' when it has none); undefined for any other text. */
export function linkCommandOf(text: string): string | undefined {
  const match = /^\/link(?:@\S+)?(?:\s+(.*))?$/is.exec(text.trim());
  if (!match) return undefined;
  return (match[1] ?? '').trim();
}

export const LINK_USAGE_REPLY = 'Send /link followed by the code from `herald people link-code` (it works once, for 10 minutes).';
export const LINK_INVALID_REPLY = 'That code is not valid: it may have expired (codes last 10 minutes) or been used. Ask for a new one.';
export const LINK_TAKEN_REPLY = 'This account is already linked to another person; unlink it there first.';

export interface LinkRequest {
  code: string;
  /** The qualified id of whoever sent it. */
  identity: string;
  /** One reply per platform event, however often it is redelivered. */
  idempotencyKey: string;
  platform: string;
  target: Record<string, string>;
}

/** Redeems the code and answers in the chat, through the outbox. */
export async function runLinkCommand(db: Db, request: LinkRequest): Promise<void> {
  const outcome = request.code === '' ? undefined : await redeemLinkCode(db, request.code, request.identity);
  const text =
    outcome === undefined
      ? LINK_USAGE_REPLY
      : outcome.kind === 'linked'
        ? `Linked: you are ${outcome.displayName} here too. Your memory, history search and limits now follow you on every platform.`
        : outcome.kind === 'taken'
          ? LINK_TAKEN_REPLY
          : LINK_INVALID_REPLY;
  await enqueueOutbound(db, { idempotencyKey: request.idempotencyKey, platform: request.platform, target: request.target, text, source: 'notice' });
}
