import { resolve } from 'node:path';
import { z } from 'zod';
import { integer, optionalText } from './fields.ts';

/** Lifecycle hooks and the audit trail (docs/hooks.md). */
export interface HooksConfig {
  /** The lifecycle hooks file (YAML or JSON), loaded and validated at start; none when unset. */
  file: string | undefined;
  /** Key of the HMAC-SHA256 signature `url` hooks carry in X-Herald-Signature; required by any url hook. */
  secret: string | undefined;
  /** Audit entries older than this many days are pruned by the scheduler's sweep; 0 keeps them forever. */
  auditRetentionDays: number;
}

/**
 * Entries younger than this cannot be deleted by anyone subject to the audit trigger
 * (migrations/functions/herald_audit_min_age.sql says the same in SQL; test/audit.test.ts checks they agree).
 */
export const AUDIT_MIN_RETENTION_DAYS = 30;

export const hooksSection = z
  .object({
    HERALD_HOOKS_FILE: optionalText,
    HERALD_HOOKS_SECRET: optionalText.pipe(z.string().min(16, { error: 'expected at least 16 characters' }).optional()),
    HERALD_AUDIT_RETENTION_DAYS: integer(0, 36_500)
      .refine((days) => days === 0 || days >= AUDIT_MIN_RETENTION_DAYS, {
        error: `expected 0 (keep forever) or at least ${AUDIT_MIN_RETENTION_DAYS}: younger audit entries cannot be deleted`,
      })
      .default(365),
  })
  .transform((e): HooksConfig => ({
    file: e.HERALD_HOOKS_FILE === undefined ? undefined : resolve(e.HERALD_HOOKS_FILE),
    secret: e.HERALD_HOOKS_SECRET,
    auditRetentionDays: e.HERALD_AUDIT_RETENTION_DAYS,
  }));
