import { z } from 'zod';
import { ACCOUNT_NAME, DEFAULT_ACCOUNT, PERSON_PLATFORMS } from '@herald/core';
import { MAIN_PROFILE, profileNameSchema } from './profile-name.ts';

// Bindings route inbound traffic to profiles (docs/configuration.md#bindings): an ordered list of
// rules, each matching some facts of a message and naming a profile. This module is the one
// definition of a rule, of what a message offers to match, and of which rule wins.

/**
 * The fields a rule may match, least specific first. A rule's specificity is the sum of its fields'
 * weights, so any rule naming a chat (or a person) beats any rule without one, a channel beats a
 * server, an account beats a platform: "a chat beats a channel beats an account beats a platform".
 */
export const BINDING_FIELDS = ['platform', 'account', 'chat_type', 'guild_id', 'channel_id', 'user_id', 'chat_id'] as const;
export type BindingField = (typeof BINDING_FIELDS)[number];

const WEIGHT: Readonly<Record<BindingField, number>> = Object.fromEntries(BINDING_FIELDS.map((field, rank) => [field, 2 ** rank])) as Record<BindingField, number>;

const value = z
  .string()
  .trim()
  .min(1, { error: 'expected a non-empty value' })
  .max(200, { error: 'at most 200 characters' })
  .refine((text) => ![...text].some((char) => char.charCodeAt(0) < 0x20), { error: 'control characters are not allowed' });

/** One rule as the API, the CLI and the table hold it: matched fields (at least one) and a profile. */
export const bindingRuleSchema = z
  .strictObject({
    platform: z.enum(PERSON_PLATFORMS, { error: `expected one of ${PERSON_PLATFORMS.join(', ')}` }).optional(),
    // The rule of HERALD_PLATFORMS_FILE's account names: every account it accepts can be bound.
    account: z.string().regex(ACCOUNT_NAME, { error: 'an account is 1-64 lowercase letters, digits, - and _' }).optional(),
    chat_id: value.optional(),
    guild_id: value.optional(),
    channel_id: value.optional(),
    chat_type: value.optional(),
    user_id: value.optional(),
    profile: profileNameSchema,
  })
  .refine((rule) => BINDING_FIELDS.some((field) => rule[field] !== undefined), {
    error: `a binding matches at least one of ${BINDING_FIELDS.join(', ')}`,
  });

export type BindingRule = z.infer<typeof bindingRuleSchema>;

/** The list PUT /v1/bindings replaces: at most this many rules. */
export const MAX_BINDINGS = 500;
export const bindingListSchema = z.array(bindingRuleSchema).max(MAX_BINDINGS);

/** What an inbound message offers to the rules. `userId` is qualified (`telegram:42`). */
export interface BindingFacts {
  platform: string;
  account?: string | undefined;
  chatId: string;
  chatType: string;
  guildId?: string | undefined;
  /** The channel a message came in (Discord: the channel, or a thread's parent); the chat when unset. */
  channelId?: string | undefined;
  userId: string;
}

function matches(rule: BindingRule, facts: BindingFacts): boolean {
  const bare = facts.userId.slice(facts.userId.indexOf(':') + 1);
  const checks: Record<BindingField, (expected: string) => boolean> = {
    platform: (expected) => expected === facts.platform,
    account: (expected) => expected === (facts.account ?? DEFAULT_ACCOUNT),
    chat_type: (expected) => expected === facts.chatType,
    guild_id: (expected) => expected === facts.guildId,
    channel_id: (expected) => expected === (facts.channelId ?? facts.chatId),
    // A person is written qualified (`telegram:42`) or bare (`42`, with `platform` beside it).
    user_id: (expected) => expected === facts.userId || expected === bare,
    chat_id: (expected) => expected === facts.chatId,
  };
  return BINDING_FIELDS.every((field) => rule[field] === undefined || checks[field](rule[field]));
}

export function specificity(rule: BindingRule): number {
  return BINDING_FIELDS.reduce((sum, field) => sum + (rule[field] === undefined ? 0 : WEIGHT[field]), 0);
}

/** The rule that routes these facts: the most specific match, the earlier one on a tie; else none. */
export function winningBinding(rules: readonly BindingRule[], facts: BindingFacts): { index: number; rule: BindingRule } | undefined {
  let best: { index: number; rule: BindingRule; score: number } | undefined;
  rules.forEach((rule, index) => {
    if (!matches(rule, facts)) return;
    const score = specificity(rule);
    if (best === undefined || score > best.score) best = { index, rule, score };
  });
  return best === undefined ? undefined : { index: best.index, rule: best.rule };
}

/** The profile these facts go to: the winning rule's, else `main`. */
export function profileFor(rules: readonly BindingRule[], facts: BindingFacts): string {
  return winningBinding(rules, facts)?.rule.profile ?? MAIN_PROFILE;
}

/** A rule's matched fields only (what the console and `herald profiles show` print). */
export function matchOf(rule: BindingRule): Record<string, string> {
  return Object.fromEntries(BINDING_FIELDS.flatMap((field) => (rule[field] === undefined ? [] : [[field, rule[field]]])));
}

/**
 * The account a profile's messages to `platform` leave through when the target names none (a
 * cron job's report): the first rule naming the profile and an account on that platform (or on
 * no platform in particular); undefined: the platform's default account.
 */
export function boundAccount(rules: readonly BindingRule[], profileId: string, platform: string): string | undefined {
  return rules.find((rule) => rule.profile === profileId && rule.account !== undefined && (rule.platform === undefined || rule.platform === platform))?.account;
}
