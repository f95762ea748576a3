import { createHmac, timingSafeEqual } from 'node:crypto';

/** Slack's replay window: a request signed longer ago than this is refused (its docs say five minutes). */
export const SLACK_SIGNATURE_MAX_AGE_SECONDS = 300;

export type SlackSignatureVerdict = 'ok' | 'missing' | 'stale' | 'mismatch';

/**
 * Checks `X-Slack-Signature` (v0): HMAC-SHA256 of `v0:<X-Slack-Request-Timestamp>:<raw body>` with
 * the signing secret, compared in constant time, on the body's bytes exactly as they arrived (a
 * parsed and re-serialised body would not match). A timestamp more than five minutes from now
 * either way is refused before any hashing, so a captured request cannot be replayed later.
 */
export function verifySlackSignature(
  secret: string,
  headers: Readonly<Record<string, string | string[] | undefined>>,
  rawBody: Buffer | string,
  nowMs: number = Date.now(),
): SlackSignatureVerdict {
  const signature = headers['x-slack-signature'];
  const timestamp = headers['x-slack-request-timestamp'];
  if (typeof signature !== 'string' || typeof timestamp !== 'string' || !/^\d{1,12}$/.test(timestamp)) return 'missing';
  if (Math.abs(nowMs / 1000 - Number(timestamp)) > SLACK_SIGNATURE_MAX_AGE_SECONDS) return 'stale';
  const expected = Buffer.from(`v0=${signSlackBody(secret, timestamp, rawBody)}`, 'utf8');
  const given = Buffer.from(signature, 'utf8');
  return given.length === expected.length && timingSafeEqual(given, expected) ? 'ok' : 'mismatch';
}

/** The hex HMAC Slack puts after `v0=`: also what a test signs its requests with. */
export function signSlackBody(secret: string, timestamp: string, rawBody: Buffer | string): string {
  return createHmac('sha256', secret).update(`v0:${timestamp}:`).update(rawBody).digest('hex');
}
