import { describe, expect, it } from 'vitest';
import { acceptInbound, recordResults, startTurn } from '@herald/inbox';
import { claimLease, LeaseLostError } from '@herald/leases';
import { useTestDatabase } from '../../../test/support/use-test-database.ts';
import { countQueries } from '../../../test/support/db-probes.ts';

// A tool step's results and the audit entries of their calls are one statement
// (herald_record_results): both commit or neither, and no BEGIN or COMMIT is sent for them.
describe("a tool step's results", () => {
  const database = useTestDatabase();
  const entry = (turnId: string, sessionId: string) => ({
    kind: 'tool_call' as const,
    actor: 'api:u',
    profileId: 'main',
    sessionId,
    turnId,
    subject: 'todo',
    detail: { tool_call_id: 'call-1', outcome: 'ok' },
  });
  const result = { role: 'tool' as const, content: '{"ok":true}', toolCallId: 'call-1', toolName: 'todo' };

  async function startedTurn(chatId: string) {
    const accepted = await acceptInbound(database.db, { profileId: 'main', platform: 'api', chatType: 'dm', chatId, userId: 'api:u', text: 'plan it' });
    const lease = (await claimLease(database.db, accepted.sessionId, 'w', 30_000))!;
    const turnId = crypto.randomUUID();
    await startTurn(database.db, lease, turnId, [accepted.eventId], 'prompt');
    return { lease, turnId, sessionId: accepted.sessionId };
  }
  const stored = async (turnId: string) => ({
    results: await database.db.selectFrom('messages').select(['content', 'tool_call_id']).where('turn_id', '=', turnId).where('role', '=', 'tool').execute(),
    audit: await database.db.selectFrom('audit_log').select(['kind', 'subject', 'detail']).where('turn_id', '=', turnId).execute(),
  });

  it('stores the results with their audit entries in one statement', async () => {
    const { lease, turnId, sessionId } = await startedTurn('results-one');
    const counted = countQueries(database.db, 'herald_record_results');
    await recordResults(counted.db, lease, turnId, [result], [entry(turnId, sessionId)]);
    expect(counted.count()).toBe(1);
    expect(await stored(turnId)).toEqual({
      results: [{ content: '{"ok":true}', tool_call_id: 'call-1' }],
      audit: [{ kind: 'tool_call', subject: 'todo', detail: { tool_call_id: 'call-1', outcome: 'ok' } }],
    });
  });

  it('stores neither when the lease is gone', async () => {
    const { lease, turnId, sessionId } = await startedTurn('results-fenced');
    await expect(recordResults(database.db, { ...lease, token: lease.token + 1 }, turnId, [result], [entry(turnId, sessionId)])).rejects.toBeInstanceOf(LeaseLostError);
    expect(await stored(turnId)).toEqual({ results: [], audit: [] });
  });
});
