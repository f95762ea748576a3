import { describe, expect, it } from 'vitest';
import { acceptInbound, NotYourChatError } from '@herald/inbox';
import type { InboundMessage } from '@herald/inbox';
import { useTestDatabase } from '../../../test/support/use-test-database.ts';

// A person's API chat is theirs (InboundMessage.ownChat): the ingress looks before the accept, but a
// chat two people start at the same moment is not there yet when either looks. The commit decides,
// under the session row lock, for a plain message and for a chat command alike.
describe('a chat only its starter may use', () => {
  const database = useTestDatabase();
  const message = (chatId: string, userId: string, text: string): InboundMessage => ({ profileId: 'main', platform: 'api', chatType: 'dm', chatId, userId, text, ownChat: true });
  const settle = (promise: Promise<unknown>) =>
    promise.then(
      () => 'accepted',
      (error: unknown) => (error instanceof NotYourChatError ? 'refused' : Promise.reject(error)),
    );

  it('lets one of two people racing into a new chat in and refuses the other, writing nothing of theirs', async () => {
    for (let round = 0; round < 10; round++) {
      const chat = `race-${round}`;
      const outcomes = await Promise.all([settle(acceptInbound(database.db, message(chat, 'api:alice', 'a'))), settle(acceptInbound(database.db, message(chat, 'api:bob', 'b')))]);
      expect(outcomes.sort()).toEqual(['accepted', 'refused']);
    }
    const senders = await database.db
      .selectFrom('inbound_events')
      .innerJoin('sessions', 'sessions.id', 'inbound_events.session_id')
      .select(['sessions.origin_user_id', 'inbound_events.user_id'])
      .where('sessions.chat_id', 'like', 'race-%')
      .execute();
    expect(senders).toHaveLength(10);
    for (const row of senders) expect(row.user_id).toBe(row.origin_user_id);
  });

  it("answers a repeated idempotency key with the sender's own event only", async () => {
    const keyed = (userId: string, text: string) => ({ ...message('keyed', userId, text), dedupeKey: 'api:keyed:k1' });
    const first = await acceptInbound(database.db, keyed('api:alice', 'the plan'));
    expect((await acceptInbound(database.db, keyed('api:alice', 'the plan'))).eventId).toBe(first.eventId);
    await expect(acceptInbound(database.db, keyed('api:bob', 'the plan?'))).rejects.toBeInstanceOf(NotYourChatError);
    await expect(acceptInbound(database.db, keyed('api:bob', '/status'))).rejects.toBeInstanceOf(NotYourChatError);
  });

  it("refuses a /new into another person's chat before it ends their session", async () => {
    const started = await acceptInbound(database.db, message('theirs', 'api:alice', 'hello'));
    await expect(acceptInbound(database.db, message('theirs', 'api:bob', '/new'))).rejects.toBeInstanceOf(NotYourChatError);
    const session = await database.db.selectFrom('sessions').select('ended_at').where('id', '=', started.sessionId).executeTakeFirstOrThrow();
    expect(session.ended_at).toBeNull();
    const again = await acceptInbound(database.db, message('theirs', 'api:alice', 'still here'));
    expect(again.sessionId).toBe(started.sessionId);
  });

  it('lets anyone in where ownChat is not asked (a group chat, the bootstrap token)', async () => {
    const first = await acceptInbound(database.db, { ...message('shared', 'api:alice', 'hi'), ownChat: false });
    const second = await acceptInbound(database.db, { ...message('shared', 'api:bob', 'hi'), ownChat: false });
    expect(second.sessionId).toBe(first.sessionId);
  });
});
