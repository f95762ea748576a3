import { z } from 'zod';
import { CHAT_PLATFORMS } from '../platform-registry.ts';
import { parseUserId } from '../user-id.ts';
import { commaList } from './fields.ts';

/**
 * Limits on what people may ask of the cluster (docs/security.md, "Limits"). 0 turns a limit off,
 * which is every limit's default. Counted in Postgres when a message is accepted, so every ingress
 * replica sees the same counts.
 */
export interface QuotaConfig {
  /** Messages one person may start turns with per minute, over all their chats. */
  turnsPerMinute: number;
  globalTurnsPerMinute: number;
  /** Turns one person may have in flight at once (accepted, not yet answered), over all chats. */
  concurrentTurns: number;
  globalConcurrentTurns: number;
  /** Model tokens (input and output) one person's turns may use per UTC day. */
  tokensPerDay: number;
  globalTokensPerDay: number;
  /** Bytes of files one person's messages may bring in per UTC day (HERALD_LIMIT_ATTACHMENT_MB_PER_DAY). */
  attachmentBytesPerDay: number;
  globalAttachmentBytesPerDay: number;
}

/** Who may answer any approval or question besides the person whose turn asked, and the quotas. */
export interface PeopleConfig {
  /** Qualified user ids (`telegram:42`, `api:ops`). */
  operators: string[];
  quotas: QuotaConfig;
  /** Personal API tokens one person may hold at once (not revoked, not expired). */
  tokensPerPerson: number;
  /**
   * HERALD_API_TOKEN_DISABLED: the bootstrap token (HERALD_API_TOKEN) is refused once an admin
   * person exists; while none exists it still works, so no one is locked out.
   */
  bootstrapTokenDisabled: boolean;
}

const MB = 1024 * 1024;

const quota = (max: number) =>
  z.coerce
    .number({ error: 'expected a number' })
    .int({ error: 'expected a whole number' })
    .min(0, { error: 'expected 0 (off) or more' })
    .max(max, { error: `expected at most ${max}` })
    .default(0);

export const peopleSection = z
  .object({
    HERALD_OPERATORS: commaList.refine((ids) => ids.every((id) => parseUserId(id) !== undefined), {
      error: `expected user ids qualified by platform, separated by commas, e.g. ${CHAT_PLATFORMS[0]}:42,api:ops`,
    }),
    HERALD_LIMIT_TURNS_PER_MINUTE: quota(1_000_000),
    HERALD_LIMIT_GLOBAL_TURNS_PER_MINUTE: quota(100_000_000),
    HERALD_LIMIT_CONCURRENT_TURNS: quota(1_000_000),
    HERALD_LIMIT_GLOBAL_CONCURRENT_TURNS: quota(100_000_000),
    HERALD_LIMIT_TOKENS_PER_DAY: quota(1_000_000_000_000),
    HERALD_LIMIT_GLOBAL_TOKENS_PER_DAY: quota(1_000_000_000_000),
    HERALD_LIMIT_ATTACHMENT_MB_PER_DAY: quota(10_000_000),
    HERALD_LIMIT_GLOBAL_ATTACHMENT_MB_PER_DAY: quota(1_000_000_000),
    HERALD_TOKENS_PER_PERSON: z.coerce
      .number({ error: 'expected a number' })
      .int({ error: 'expected a whole number' })
      .min(1, { error: 'expected at least 1' })
      .max(1000, { error: 'expected at most 1000' })
      .default(10),
    HERALD_API_TOKEN_DISABLED: z
      .enum(['true', 'false', '1', '0'], { error: 'expected true or false' })
      .default('false')
      .transform((v) => v === 'true' || v === '1'),
  })
  .transform((e): PeopleConfig => ({
    operators: e.HERALD_OPERATORS,
    quotas: {
      turnsPerMinute: e.HERALD_LIMIT_TURNS_PER_MINUTE,
      globalTurnsPerMinute: e.HERALD_LIMIT_GLOBAL_TURNS_PER_MINUTE,
      concurrentTurns: e.HERALD_LIMIT_CONCURRENT_TURNS,
      globalConcurrentTurns: e.HERALD_LIMIT_GLOBAL_CONCURRENT_TURNS,
      tokensPerDay: e.HERALD_LIMIT_TOKENS_PER_DAY,
      globalTokensPerDay: e.HERALD_LIMIT_GLOBAL_TOKENS_PER_DAY,
      attachmentBytesPerDay: e.HERALD_LIMIT_ATTACHMENT_MB_PER_DAY * MB,
      globalAttachmentBytesPerDay: e.HERALD_LIMIT_GLOBAL_ATTACHMENT_MB_PER_DAY * MB,
    },
    tokensPerPerson: e.HERALD_TOKENS_PER_PERSON,
    bootstrapTokenDisabled: e.HERALD_API_TOKEN_DISABLED,
  }));
