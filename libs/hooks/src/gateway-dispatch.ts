import { withAudit } from '@herald/audit';
import type { Hooks } from './hooks.ts';
import { decisionAudit } from './hooks.ts';

/** A message at the ingress, before it is committed to the inbox. */
export interface DispatchMessage {
  profileId: string;
  platform: string;
  chatId: string;
  threadId?: string | undefined;
  userId: string;
  text: string;
}

export type DispatchVerdict = { kind: 'skip'; reason: string } | { kind: 'accept'; text: string };

/**
 * pre_gateway_dispatch: the profile's hooks may drop the message (nothing is committed or
 * enqueued) or rewrite its text. Their decisions go to the audit trail before the answer is given.
 */
export async function gatewayDispatch(hooks: Hooks | undefined, db: Parameters<typeof withAudit>[0], message: DispatchMessage): Promise<DispatchVerdict> {
  if (hooks === undefined) return { kind: 'accept', text: message.text };
  const set = await hooks.forProfile(message.profileId);
  if (!set.has('pre_gateway_dispatch')) return { kind: 'accept', text: message.text };
  const fired = await set.fire('pre_gateway_dispatch', {
    profile_id: message.profileId,
    platform: message.platform,
    chat_id: message.chatId,
    thread_id: message.threadId ?? null,
    user_id: message.userId,
    text: message.text,
  });
  const audit = decisionAudit('pre_gateway_dispatch', fired.decisions, { actor: message.userId, profileId: message.profileId });
  if (audit.length > 0) await withAudit(db, async () => ({ result: undefined, audit }));
  const directive = fired.directive;
  if (directive?.action === 'skip') return { kind: 'skip', reason: directive.reason ?? 'dropped by a pre_gateway_dispatch hook' };
  if (directive?.action === 'rewrite') return { kind: 'accept', text: directive.text };
  return { kind: 'accept', text: message.text };
}
