import { z } from 'zod';

// Reset policies (docs/long-chats.md#resets): a rule names a platform and a chat type (either may
// be left out to match any) and when a session of such a chat ends by itself: never ('none', the
// default), after `idle_minutes` without a message, every day at `at_hour` in `timezone`, or both.
// The first matching rule wins: a profile's own rules (PATCH /v1/profiles/:id session_reset), then
// HERALD_SESSION_RESET's.

function isTimeZone(value: string): boolean {
  try {
    new Intl.DateTimeFormat('en', { timeZone: value });
    return true;
  } catch {
    return false;
  }
}

const selector = z.string().regex(/^[a-z_]{1,32}$/, { error: 'expected a platform or chat type name (a-z, _)' });

/** One rule, in the shape both HERALD_SESSION_RESET and a profile's session_reset take. */
export const resetRuleSchema = z.strictObject({
  platform: selector.optional(),
  chat_type: selector.optional(),
  mode: z.enum(['none', 'idle', 'daily', 'both'], { error: 'expected none, idle, daily or both' }),
  idle_minutes: z.number({ error: 'expected a number' }).int({ error: 'expected a whole number' }).min(1).max(525_600).default(1440),
  at_hour: z.number({ error: 'expected a number' }).int({ error: 'expected a whole number' }).min(0).max(23).default(4),
  timezone: z.string().refine(isTimeZone, { error: 'expected an IANA time zone such as Europe/Berlin' }).default('UTC'),
});
export type ResetRule = z.output<typeof resetRuleSchema>;

export const resetRulesSchema = z.array(resetRuleSchema).max(50, { error: 'expected at most 50 rules' });

export interface SessionResetConfig {
  /** HERALD_SESSION_RESET: rules tried after a profile's own; none by default. */
  rules: readonly ResetRule[];
}

const resetEnv = z.object({
  HERALD_SESSION_RESET: z
    .string()
    .optional()
    .transform((value, ctx) => {
      if (value === undefined || value.trim() === '') return [];
      let parsed: unknown;
      try {
        parsed = JSON.parse(value);
      } catch {
        ctx.addIssue({ code: 'custom', message: 'expected a JSON list of reset rules' });
        return z.NEVER;
      }
      const rules = resetRulesSchema.safeParse(parsed);
      if (rules.success) return rules.data;
      const issue = rules.error.issues[0];
      ctx.addIssue({ code: 'custom', message: `rule ${issue?.path.join('.') ?? ''}: ${issue?.message ?? 'invalid'}` });
      return z.NEVER;
    }),
});

export const sessionResetSection = resetEnv.transform((e): SessionResetConfig => ({ rules: e.HERALD_SESSION_RESET }));

/** The first rule matching a chat, or undefined (no reset). */
export function resetRuleFor(rules: readonly ResetRule[], platform: string, chatType: string): ResetRule | undefined {
  const rule = rules.find((r) => (r.platform === undefined || r.platform === platform) && (r.chat_type === undefined || r.chat_type === chatType));
  return rule === undefined || rule.mode === 'none' ? undefined : rule;
}
