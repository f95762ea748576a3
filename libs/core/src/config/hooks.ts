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

export const hooksSection = z
  .object({
    HERALD_HOOKS_FILE: optionalText,
    HERALD_HOOKS_SECRET: optionalText.pipe(z.string().min(16, { error: 'expected at least 16 characters' }).optional()),
    HERALD_AUDIT_RETENTION_DAYS: integer(0, 36_500).default(365),
  })
  .transform(
    (e): HooksConfig => ({
      file: e.HERALD_HOOKS_FILE === undefined ? undefined : resolve(e.HERALD_HOOKS_FILE),
      secret: e.HERALD_HOOKS_SECRET,
      auditRetentionDays: e.HERALD_AUDIT_RETENTION_DAYS,
    }),
  );
