import { createHmac, timingSafeEqual } from 'node:crypto';

/** Slack's replay window: a request signed longer ago than this is refused (its docs say five minutes). */
export const SLACK_SIGNATURE_MAX_AGE_SECONDS = 300;

export type SlackSignatureVerdict = 'ok' | 'missing' | 'stale' | 'mismatch';

/** A verdict of matchSlackSignature: `ok` names which of the secrets signed the request. */
export type SlackSignatureMatch = { verdict: 'ok'; index: number } | { verdict: Exclude<SlackSignatureVerdict, 'ok'> };

/**
 * Checks `X-Slack-Signature` (v0): HMAC-SHA256 of `v0:<X-Slack-Request-Timestamp>:<raw body>` with
 * the signing secret, compared in constant time, on the body's bytes exactly as they arrived (a
 * parsed and re-serialised body would not match). A timestamp more than five minutes from now
 * either way is refused before any hashing, so a captured request cannot be replayed later.
 */
export function verifySlackSignature(secret: string, headers: Readonly<Record<string, string | string[] | undefined>>, rawBody: Buffer | string, nowMs: number = Date.now()): SlackSignatureVerdict {
  return matchSlackSignature([secret], headers, rawBody, nowMs).verdict;
}

/**
 * The same check against several apps' signing secrets (one Events API URL serves every Slack app
 * of the deployment): which secret signed the request, tried against every one with no early
 * exit, each compared in constant time. Nothing of the body is read to choose: an unverified
 * `api_app_id` would let a request pick the secret it is checked against.
 */
export function matchSlackSignature(
  secrets: readonly string[],
  headers: Readonly<Record<string, string | string[] | undefined>>,
  rawBody: Buffer | string,
  nowMs: number = Date.now(),
): SlackSignatureMatch {
  const signature = headers['x-slack-signature'];
  const timestamp = headers['x-slack-request-timestamp'];
  if (typeof signature !== 'string' || typeof timestamp !== 'string' || !/^\d{1,12}$/.test(timestamp)) return { verdict: 'missing' };
  if (Math.abs(nowMs / 1000 - Number(timestamp)) > SLACK_SIGNATURE_MAX_AGE_SECONDS) return { verdict: 'stale' };
  const given = Buffer.from(signature, 'utf8');
  let index = -1;
  for (const [candidate, secret] of secrets.entries()) {
    const expected = Buffer.from(`v0=${signSlackBody(secret, timestamp, rawBody)}`, 'utf8');
    const same = given.length === expected.length && timingSafeEqual(given, expected);
    if (same && index < 0) index = candidate;
  }
  return index < 0 ? { verdict: 'mismatch' } : { verdict: 'ok', index };
}

/** The hex HMAC Slack puts after `v0=`: also what a test signs its requests with. */
export function signSlackBody(secret: string, timestamp: string, rawBody: Buffer | string): string {
  return createHmac('sha256', secret).update(`v0:${timestamp}:`).update(rawBody).digest('hex');
}
