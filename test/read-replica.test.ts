import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startOwnPostgres } from './faults/fault-support.ts';
import type { OwnService } from './faults/fault-support.ts';
import { startFakeOpenAI } from './support/fake-llm.ts';
import type { FakeLLM } from './support/fake-llm.ts';
import { startStreamingReplica } from './support/streaming-replica.ts';
import type { StreamingReplica } from './support/streaming-replica.ts';
import { PROCESS_START_MS, startStack, TEST_TOKEN, waitFor } from './support/stack.ts';
import type { Stack } from './support/stack.ts';

interface Answer {
  status: number;
  body: any;
  readAfter: string | null;
  cookie: string | null;
}

// Issue 41, point 8: the reads that tolerate lag (history search, the session lists, transcripts)
// go to a streaming replica when DATABASE_READ_URL is set; a reader who wrote reads the primary
// until the replica has replayed their write.
describe('reads that tolerate lag go to a streaming replica, with read-your-writes', { timeout: 4 * PROCESS_START_MS }, () => {
  let primary: OwnService;
  let replica: StreamingReplica;
  let llm: FakeLLM;
  let stack: Stack;

  beforeAll(async () => {
    primary = await startOwnPostgres();
    replica = await startStreamingReplica(primary);
    llm = await startFakeOpenAI();
    llm.handler = (request) => ({ text: `noted: ${request.lastUserText}` });
    stack = await startStack({ model: llm, adminUrl: primary.url, readUrl: (url) => replica.urlFor(url) });
  }, 3 * PROCESS_START_MS);

  afterAll(async () => {
    await replica?.resumeReplay().catch(() => undefined);
    await stack?.stop();
    await replica?.stop();
    await primary?.stop();
  });

  const call = async (method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<Answer> => {
    const response = await fetch(`${stack.url}${path}`, {
      method,
      headers: { authorization: `Bearer ${TEST_TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: response.status, body: await response.json(), readAfter: response.headers.get('x-herald-read-after'), cookie: response.headers.get('set-cookie') };
  };
  const say = (user: string, text: string) => call('POST', '/v1/messages?wait=30', { chat_id: `chat-${user}`, user_id: user, text });
  const search = (user: string, q: string, headers: Record<string, string> = {}) => call('GET', `/v1/search?user_id=${user}&q=${q}`, undefined, headers);
  const found = (answer: Answer) => answer.body.sessions.flatMap((session: any) => session.hits).length;
  const sessionsOf = async (user: string, headers: Record<string, string> = {}) => (await call('GET', `/v1/sessions?user_id=${user}`, undefined, headers)).body.sessions as any[];
  const transcript = async (sessionId: string, headers: Record<string, string> = {}) =>
    ((await call('GET', `/v1/sessions/${sessionId}/messages`, undefined, headers)).body.messages as any[]).map((message) => message.content as string);

  it('serves search, session lists and transcripts from the replica: what it has not replayed is not there', async () => {
    const first = await say('ann', 'the zebra report');
    expect(first.status).toBe(200);
    // Caught up, the replica answers like the primary.
    await waitFor(async () => found(await search('ann', 'zebra')) > 0, { what: 'the replica caught up' });
    const [session] = await sessionsOf('ann');
    expect(session).toBeDefined();

    await replica.pauseReplay();
    // The turn a person waits on runs and answers on the primary while the replica stands still.
    const second = await say('ann', 'the quokka census');
    expect(second.status).toBe(200);
    expect(second.body.reply.text).toBe('noted: the quokka census');
    await say('bob', 'a new chat about lemurs');

    // Without a position, the reads go to the replica, which has not replayed any of it.
    expect(found(await search('ann', 'quokka'))).toBe(0);
    expect(await transcript(session.session_id)).toEqual(['the zebra report', 'noted: the zebra report']);
    expect(await sessionsOf('bob')).toEqual([]);
    // The replica's own backends show the reads (pg_stat_activity there): they were really served by it.
    const onReplica = await replica.query<{ n: string }>(`SELECT count(*) AS n FROM pg_stat_activity WHERE datname = '${stack.database.name}'`);
    expect(Number(onReplica[0]?.n)).toBeGreaterThan(0);

    await replica.resumeReplay();
    await waitFor(async () => found(await search('ann', 'quokka')) > 0, { what: 'the replica replayed the census' });
    expect(await transcript(session.session_id)).toHaveLength(4);
  });

  it('gives a person who just wrote their own writes, from the primary, until the replica has them', async () => {
    await replica.pauseReplay();
    const wrote = await say('cleo', 'the narwhal sighting');
    expect(wrote.status).toBe(200);
    expect(wrote.readAfter).toMatch(/^[0-9A-F]+\/[0-9A-F]+$/);
    expect(wrote.cookie).toMatch(new RegExp(`^herald_read_after=${wrote.readAfter?.replace('/', '\\/')}; Path=/; Max-Age=\\d+; HttpOnly; SameSite=Strict$`));
    const header = { 'x-herald-read-after': wrote.readAfter ?? '' };
    const cookie = { cookie: `other=1; herald_read_after=${wrote.readAfter ?? ''}` };

    // With the position (the header an API client sends back, or the console's cookie): the primary.
    expect(found(await search('cleo', 'narwhal', header))).toBe(2);
    const [session] = await sessionsOf('cleo', cookie);
    expect(await transcript(session.session_id, header)).toEqual(['the narwhal sighting', 'noted: the narwhal sighting']);
    // Without it, or with something that is no WAL position: the replica, still paused.
    expect(found(await search('cleo', 'narwhal'))).toBe(0);
    expect(found(await search('cleo', 'narwhal', { 'x-herald-read-after': "0/0'; SELECT 1" }))).toBe(0);
    expect(await sessionsOf('cleo')).toEqual([]);

    // Polling the turn one waits on hands out a position too (the reply was written after the POST).
    const event = await call('GET', `/v1/events/${wrote.body.event_id}`);
    expect(event.readAfter).toMatch(/^[0-9A-F]+\/[0-9A-F]+$/);
    // A read needs no position to go to the replica, and reads hand none out.
    expect((await search('cleo', 'narwhal')).readAfter).toBeNull();

    await replica.resumeReplay();
    // Once the replica has replayed past the position, the same reader is served by it again.
    await waitFor(async () => found(await search('cleo', 'narwhal')) === 2, { what: 'the replica replayed the sighting' });
    await replica.pauseReplay();
    await say('dan', 'unrelated');
    expect(found(await search('cleo', 'narwhal', header))).toBe(2);
    expect(await sessionsOf('dan', header)).toEqual([]);
    await replica.resumeReplay();
  });
});
