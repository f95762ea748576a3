import { describe, expect, it } from 'vitest';
import { CHAT_PLATFORMS, silentLogger, storedTarget } from '@herald/core';
import { acceptInbound, finishTurn, startTurn } from '@herald/inbox';
import { claimLease, LeaseLostError, openInbox } from '@herald/leases';
import { claimOutbound, DeliveryConsumer, DeliveryError, enqueueOutbound, listDeliveries } from '@herald/delivery';
import type { OutboundDelivery, OutboundSender } from '@herald/delivery';
import { useTestDatabase } from '../../../test/support/use-test-database.ts';
import { waitFor } from '../../../test/support/stack.ts';

describe('the outbox', () => {
  const database = useTestDatabase();

  const row = (key: string) => database.db.selectFrom('outbox').selectAll().where('idempotency_key', '=', key).executeTakeFirstOrThrow();

  it('enqueues once per idempotency key', async () => {
    const item = { idempotencyKey: 'k:once', platform: 'test', target: { chatId: '1' }, text: 'hi', source: 'notice' };
    const first = await enqueueOutbound(database.db, item);
    const second = await enqueueOutbound(database.db, { ...item, text: 'changed' });
    expect(first.created).toBe(true);
    expect(second).toEqual({ id: first.id, created: false });
    expect((await row('k:once')).text).toBe('hi');
  });

  it('claims only the oldest open row per target, so a chat gets its messages in order', async () => {
    await enqueueOutbound(database.db, { idempotencyKey: 'o:1', platform: 'order', target: { chatId: 'a' }, text: '1', source: 'x' });
    await enqueueOutbound(database.db, { idempotencyKey: 'o:2', platform: 'order', target: { chatId: 'a' }, text: '2', source: 'x' });
    await enqueueOutbound(database.db, { idempotencyKey: 'o:3', platform: 'order', target: { chatId: 'b' }, text: '3', source: 'x' });
    const claims = await Promise.all([1, 2, 3].map(() => claimOutbound(database.db, { platforms: ['order'], limit: 5, claimMs: 60_000 })));
    const texts = claims
      .flat()
      .map((claimed) => claimed.text)
      .sort();
    expect(texts).toEqual(['1', '3']);
  });

  it('retries after the platform asks to wait, records parts, and stores the receipt', async () => {
    const calls: string[] = [];
    let rateLimited = false;
    const sender: OutboundSender = {
      async send(item: OutboundDelivery) {
        const ids = [...item.progress.partsSent];
        for (let part = ids.length; part < 2; part++) {
          await item.progress.beginPart(part, null);
          calls.push(`part ${part} attempt ${item.attempts}`);
          if (part === 1 && !rateLimited) {
            rateLimited = true;
            throw new DeliveryError('Too Many Requests: retry after 1', { retryable: true, retryAfterMs: 200 });
          }
          const id = `m${part}`;
          await item.progress.partSent(part, id);
          ids.push(id);
        }
        return { messageIds: ids };
      },
    };
    const consumer = new DeliveryConsumer({
      db: database.db,
      senders: new Map([['retry', sender]]),
      logger: silentLogger,
      pollIntervalMs: 50,
      retryBaseMs: 10,
    });
    consumer.start();
    try {
      await enqueueOutbound(database.db, { idempotencyKey: 'r:1', platform: 'retry', target: { chatId: 'c' }, text: 'x', source: 'x' });
      const delivered = await waitFor(async () => {
        const current = await row('r:1');
        return current.status === 'delivered' ? current : undefined;
      });
      expect(delivered.receipt).toEqual({ messageIds: ['m0', 'm1'] });
      expect(delivered.attempts).toBe(2);
      expect(delivered.in_flight).toBeNull();
      // Part 0 went out once: the retry resumed after it.
      expect(calls).toEqual(['part 0 attempt 1', 'part 1 attempt 1', 'part 1 attempt 2']);
    } finally {
      await consumer.stop();
    }
  });

  it('gives a crashed send back with its in-flight mark, and fails for good on a permanent error', async () => {
    await enqueueOutbound(database.db, { idempotencyKey: 'c:1', platform: 'crash', target: { chatId: 'c' }, text: 'x', source: 'x' });
    // A consumer claims, marks part 0 as in flight, and dies without a word.
    const [claimed] = await claimOutbound(database.db, { platforms: ['crash'], limit: 1, claimMs: 100 });
    const { progressFor } = await import('@herald/delivery');
    await progressFor(database.db, claimed!).beginPart(0, '41');
    const seen: unknown[] = [];
    const consumer = new DeliveryConsumer({
      db: database.db,
      senders: new Map([
        [
          'crash',
          {
            async send(item: OutboundDelivery) {
              seen.push(item.progress.inFlight);
              throw new DeliveryError('Bad Request: chat not found', { retryable: false });
            },
          },
        ],
      ]),
      logger: silentLogger,
      pollIntervalMs: 50,
    });
    consumer.start();
    try {
      const failed = await waitFor(async () => {
        const current = await row('c:1');
        return current.status === 'failed' ? current : undefined;
      });
      expect(failed.last_error).toBe('Bad Request: chat not found');
      expect(seen).toEqual([expect.objectContaining({ part: 0, anchor: '41' })]);
    } finally {
      await consumer.stop();
    }
    const sessionless = await listDeliveries(database.db, '00000000-0000-0000-0000-000000000000');
    expect(sessionless).toEqual([]);
  });

  it('writes a chat reply to the outbox in the turn-ending transaction, and nothing for the API or a lost lease', async () => {
    const finish = async (platform: string, chatId: string, loseLease = false) => {
      const accepted = await acceptInbound(database.db, {
        profileId: 'main',
        platform,
        chatType: 'group',
        chatId,
        threadId: '9',
        userId: `${platform}:u`,
        text: 'hi',
        platformMessageId: '77',
      });
      const lease = (await claimLease(database.db, accepted.sessionId, 'w', 60_000))!;
      const events = (await openInbox(database.db, accepted.sessionId)).events.map((event) => event.id);
      const turnId = crypto.randomUUID();
      await startTurn(database.db, lease, turnId, events, 'system');
      if (loseLease) await database.db.updateTable('session_leases').set({ token: '999' }).where('session_id', '=', accepted.sessionId).execute();
      await finishTurn(database.db, lease, turnId, events, { reply: 'the answer', failed: false, error: null, iterations: 1, modelCall: null });
      return turnId;
    };
    const telegramTurn = await finish('telegram', 'tg-chat');
    const reply = await row(`reply:${telegramTurn}`);
    expect(reply).toMatchObject({ platform: 'telegram', text: 'the answer', source: 'reply', status: 'pending' });
    expect(reply.target).toEqual({ chatId: 'tg-chat', chatType: 'group', threadId: '9', replyTo: '77' });
    const apiTurn = await finish('api', 'api-chat');
    expect(await database.db.selectFrom('outbox').select('id').where('idempotency_key', '=', `reply:${apiTurn}`).executeTakeFirst()).toBeUndefined();
    await expect(finish('discord', 'dc-chat', true)).rejects.toSatisfy((error) => LeaseLostError.isInstance(error));
    const discordRows = await database.db.selectFrom('outbox').select('id').where('platform', '=', 'discord').execute();
    expect(discordRows).toEqual([]);
    // Every platform of the registry gets its reply (the SQL takes the list as data), in the one stored target form.
    for (const platform of CHAT_PLATFORMS) {
      const turn = await finish(platform, `${platform}-every`);
      const target = storedTarget({ chatId: `${platform}-every`, chatType: 'group', threadId: '9', replyTo: '77' });
      expect((await row(`reply:${turn}`)).target).toEqual(target);
    }
  });
});
