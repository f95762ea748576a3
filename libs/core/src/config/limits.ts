import { z } from 'zod';
import { integer } from './fields.ts';

/** What one message and one session may hold, enforced wherever a message enters (API and chats). */
export interface LimitsConfig {
  maxMessageChars: number;
  /** Most unanswered messages one session may hold. */
  sessionBacklog: number;
}

export const limitsSection = z
  .object({
    HERALD_MAX_MESSAGE_CHARS: integer(1, 1_000_000).default(32_000),
    HERALD_SESSION_BACKLOG: integer(1, 10_000).default(50),
  })
  .transform((e): LimitsConfig => ({ maxMessageChars: e.HERALD_MAX_MESSAGE_CHARS, sessionBacklog: e.HERALD_SESSION_BACKLOG }));
