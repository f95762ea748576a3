import { sql } from 'kysely';
import type { Kysely } from 'kysely';
import { isChatPlatform, resetRuleFor, resetRulesSchema } from '@herald/core';
import type { ResetRule } from '@herald/core';
import { readProfileSettings } from '@herald/db';
import type { Database, ProfileCache } from '@herald/db';
import { enqueueOutbound } from '@herald/delivery';
import { endSession } from '@herald/session';
import type { RouteAddress } from '@herald/session';

// Reset policies (docs/long-chats.md#resets), checked when a message arrives, as Hermes does: when
// the chat's session has been idle too long, or has not been written in since the last daily reset
// hour, it ends ('reset') and its route is dropped, so the message that arrived starts a fresh
// session. The person is told once, in the same transaction as the reset (an outbox message keyed
// by the ended session). A session with something open (a message waiting, a turn running or
// waiting for the person) is never reset under it.

interface RoutedSession {
  id: string;
  last_active: Date;
  busy: boolean;
}

/** Why the session expired under `rule`, or undefined when it has not. */
async function expiry(db: Kysely<Database>, rule: ResetRule, lastActive: Date): Promise<string | undefined> {
  const checked = await sql<{ idle: boolean; daily: boolean }>`
    SELECT ${lastActive}::timestamptz < now() - make_interval(mins => ${rule.idle_minutes}) AS idle,
           ${lastActive}::timestamptz < (CASE WHEN today <= now() THEN today ELSE yesterday END) AS daily
    FROM (SELECT (local_day + make_interval(hours => ${rule.at_hour})) AT TIME ZONE ${rule.timezone} AS today,
                 (local_day - interval '1 day' + make_interval(hours => ${rule.at_hour})) AT TIME ZONE ${rule.timezone} AS yesterday
          FROM (SELECT date_trunc('day', now() AT TIME ZONE ${rule.timezone}) AS local_day) d) b`.execute(db);
  const row = checked.rows[0];
  if ((rule.mode === 'idle' || rule.mode === 'both') && row?.idle === true) {
    return `after ${rule.idle_minutes} minutes without a message`;
  }
  if ((rule.mode === 'daily' || rule.mode === 'both') && row?.daily === true) {
    return `at the daily reset (${String(rule.at_hour).padStart(2, '0')}:00 ${rule.timezone})`;
  }
  return undefined;
}

async function hasOpenWork(db: Kysely<Database>, sessionId: string): Promise<boolean> {
  const open = await sql<{ busy: boolean }>`
    SELECT EXISTS (SELECT 1 FROM inbound_events e WHERE e.session_id = ${sessionId} AND e.status IN ('pending', 'processing'))
        OR EXISTS (SELECT 1 FROM turns t WHERE t.session_id = ${sessionId} AND t.status IN ('running', 'waiting')) AS busy`.execute(db);
  return open.rows[0]?.busy === true;
}

export function resetNotice(why: string): string {
  return `The previous conversation here ended ${why}; this one starts fresh. Earlier conversations stay searchable.`;
}

/**
 * The rule for this chat: the profile's own rules (`profiles.session_reset` as stored) first, then
 * the config's (HERALD_SESSION_RESET). Undefined when none matches, or the match says 'none': the
 * chat's session never resets, and the message needs no reset check at all.
 */
export function chatResetRule(profileRules: unknown, configRules: readonly ResetRule[], address: RouteAddress): ResetRule | undefined {
  const own = resetRulesSchema.safeParse(profileRules);
  return resetRuleFor([...(own.success ? own.data : []), ...configRules], address.platform, address.chatType);
}

/** Ends the chat's session when `rule` (chatResetRule's) says it expired; true when it did. */
export async function resetIfExpired(db: Kysely<Database>, key: string, address: RouteAddress, rule: ResetRule): Promise<boolean> {
  const found = await sql<RoutedSession>`
    SELECT s.id,
           GREATEST(s.created_at, (SELECT m.created_at FROM messages m WHERE m.session_id = s.id ORDER BY m.seq DESC LIMIT 1)) AS last_active,
           (EXISTS (SELECT 1 FROM inbound_events e WHERE e.session_id = s.id AND e.status IN ('pending', 'processing'))
            OR EXISTS (SELECT 1 FROM turns t WHERE t.session_id = s.id AND t.status IN ('running', 'waiting'))) AS busy
    FROM session_routes r JOIN sessions s ON s.id = r.session_id
    WHERE r.session_key = ${key} AND s.ended_at IS NULL`.execute(db);
  const session = found.rows[0];
  if (!session || session.busy) return false;
  const why = await expiry(db, rule, session.last_active);
  if (why === undefined) return false;
  return db.transaction().execute(async (trx) => {
    // The session row lock herald_accept_message takes: a message racing this one waits, then routes anew.
    await trx.selectFrom('sessions').select('id').where('id', '=', session.id).forUpdate().execute();
    // Read again under the lock: a message accepted since the first read must not lose its session.
    if (await hasOpenWork(trx, session.id)) return false;
    if (!(await endSession(trx, session.id, 'reset'))) return false;
    await trx.deleteFrom('session_routes').where('session_key', '=', key).where('session_id', '=', session.id).execute();
    if (isChatPlatform(address.platform)) {
      await enqueueOutbound(trx, {
        idempotencyKey: `reset:${session.id}`,
        platform: address.platform,
        target: {
          chatId: address.chatId,
          chatType: address.chatType,
          ...(address.threadId === undefined || address.threadId === '' ? {} : { threadId: address.threadId }),
        },
        text: resetNotice(why),
        sessionId: session.id,
        source: 'reset',
      });
      await sql`SELECT pg_notify('herald_outbox', ${session.id})`.execute(trx);
    }
    return true;
  });
}

/**
 * The reset check of an arriving message: ends the chat's session first when its rule says it
 * expired. Most chats have no rule at all, and then cost no query: the profile's own rules come
 * from the process's cache (from Postgres only without one, or while its listener is down).
 */
export async function checkReset(db: Kysely<Database>, key: string, address: RouteAddress, configRules: readonly ResetRule[], profiles: ProfileCache | undefined): Promise<boolean> {
  const settings = profiles === undefined ? await readProfileSettings(db, address.profileId) : await profiles.get(address.profileId);
  const rule = chatResetRule(settings.sessionReset, configRules, address);
  return rule !== undefined && resetIfExpired(db, key, address, rule);
}
