import { randomUUID } from 'node:crypto';
import { sql } from 'kysely';
import { beforeAll, describe, expect, it } from 'vitest';
import type { Db } from '@herald/db';
import { useTestDatabase } from '../../../test/support/use-test-database.ts';
import { candidateQuery, searchHistory, searchSql } from '../src/history-search.ts';
import type { SearchOptions, SearchSort } from '../src/history-search.ts';
import { CANDIDATE_ROWS, CANDIDATE_WALK_ROWS, MIN_CANDIDATE_ROWS, walkPays } from '../src/search-candidates.ts';
import { FIRST_PERIODS, MORE_PERIODS_MAX, SEARCH_PERIOD_SECONDS } from '../src/search-periods.ts';
import { messageStats, operandShare, ownerDensityBound } from '../src/term-shares.ts';
import { otherVisibleChats } from '../src/search-scope.ts';

/** Messages in the generated history; u0 owns every other session, u1-u4 the rest. */
const MESSAGES = 60_000;
const PER_SESSION = 50;
const SEARCH_INDEXES = ['messages_scope_vector_idx', 'messages_scope_trgm_idx', 'messages_scope_time_idx'];
/** Sessions seen without being owned are read by session: the (session_id, seq) key is scoped too. */
const SESSION_KEY = 'messages_session_id_seq_key';

/** Ten minutes between messages: the history spans 416 days, about fifteen of the indexes' periods. */
const SPACING_SECONDS = 600;

/**
 * A history large enough that the planner weighs its indexes for real: words placed by message
 * number, so each test knows how many messages match. `ubiquity` is in a quarter of all messages;
 * `recentia` in a quarter of the newest 8,000 only; `middling` in one in a hundred; `rarexyz` and
 * `serialization` in a dozen each.
 */
async function seedHistory(db: Db): Promise<void> {
  await sql`
    INSERT INTO sessions (id, profile_id, session_key, platform, chat_type, chat_id, origin_user_id, created_at)
    SELECT md5('scale-' || s)::uuid, 'main', 'scale:' || s, (ARRAY['api', 'telegram'])[1 + s % 2], 'dm', 'chat-' || s,
           CASE WHEN s % 2 = 0 THEN 'u0' ELSE 'u' || (1 + s % 4) END,
           timestamptz '2025-01-01 00:00:00+00' + s * ${PER_SESSION * SPACING_SECONDS} * interval '1 second'
    FROM generate_series(0, ${MESSAGES / PER_SESSION - 1}) AS s`.execute(db);
  await sql`
    INSERT INTO messages (session_id, seq, role, content, tool_calls, tool_name, created_at)
    SELECT md5('scale-' || ((g - 1) / ${PER_SESSION}))::uuid, (g - 1) % ${PER_SESSION} + 1,
      CASE WHEN g % 10 = 5 THEN 'tool' WHEN g % 2 = 1 THEN 'user' ELSE 'assistant' END,
      concat_ws(' ', 'note', substr(md5(g::text), 1, 6),
        CASE WHEN g % 4 = 0 THEN 'ubiquity' END,
        CASE WHEN g % 4 = 1 AND g > ${MESSAGES - 8000} THEN 'recentia' END,
        CASE WHEN g % 5000 = 7 THEN 'rarexyz' END,
        CASE WHEN g % 5000 = 9 THEN 'serialization' END,
        CASE WHEN g % 100 = 3 THEN 'middling' END,
        CASE WHEN g % 17 = 0 THEN 'the deployment checklist is ready' END,
        CASE WHEN g % 13 = 0 THEN 'getUserById failed in src/users/repository.ts' END,
        CASE WHEN g % 7 = 0 THEN '服务器重启了' END,
        CASE WHEN g % 11 = 0 THEN '北京' END),
      CASE WHEN g % 10 = 4 THEN jsonb_build_array(jsonb_build_object('id', 'c' || g, 'name', 'terminal',
        'arguments', '{"command":"kubectl get pods"}')) END,
      CASE WHEN g % 10 = 5 THEN 'terminal' END,
      timestamptz '2025-01-01 00:00:00+00' + g * ${SPACING_SECONDS} * interval '1 second'
    FROM generate_series(1, ${MESSAGES}) AS g`.execute(db);
  await sql`ANALYZE messages`.execute(db);
  await sql`ANALYZE sessions`.execute(db);
}

interface PlanNode {
  'Node Type': string;
  'Relation Name'?: string;
  'Index Name'?: string;
  'Index Cond'?: string;
  'Actual Rows'?: number;
  'Actual Loops'?: number;
  'Rows Removed by Filter'?: number;
  'Rows Removed by Index Recheck'?: number;
  'Total Cost': number;
  Plans?: PlanNode[];
}

function nodesOf(node: PlanNode): PlanNode[] {
  return [node, ...(node.Plans ?? []).flatMap(nodesOf)];
}

/** EXPLAIN (ANALYZE, BUFFERS) of the statement searchHistory runs, as plan nodes. */
async function explain(db: Db, query: string, options: Partial<SearchOptions> = {}): Promise<{ root: PlanNode; nodes: PlanNode[] }> {
  const sort: SearchSort = options.sort ?? 'relevance';
  const built = await candidateQuery(db, { profileId: 'main', userId: 'u0' }, { ...options, query });
  const result = await sql<{ 'QUERY PLAN': { Plan: PlanNode }[] }>`EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ${searchSql(built, sort)}`.execute(db);
  const root = result.rows[0]?.['QUERY PLAN'][0]?.Plan;
  if (!root) throw new Error('no plan');
  return { root, nodes: nodesOf(root) };
}

/** Rows the plan's executed scans of messages touched: returned, filtered out, or rechecked away. */
function messageRowsRead(nodes: PlanNode[]): number {
  return nodes
    .filter((node) => node['Relation Name'] === 'messages' && (node['Actual Loops'] ?? 0) > 0)
    .reduce((sum, node) => sum + ((node['Actual Rows'] ?? 0) + (node['Rows Removed by Filter'] ?? 0) + (node['Rows Removed by Index Recheck'] ?? 0)) * (node['Actual Loops'] ?? 0), 0);
}

/** The indexes of messages that executed scans used, and whether any scan read the whole table. */
function messageAccess(nodes: PlanNode[]): { indexes: Set<string>; seqScan: boolean; ownerConds: string[] } {
  const executed = nodes.filter((node) => (node['Actual Loops'] ?? 0) > 0);
  const onMessages = executed.filter((node) => node['Relation Name'] === 'messages' || (node['Index Name'] ?? '').startsWith('messages_'));
  return {
    indexes: new Set(onMessages.flatMap((node) => (node['Index Name'] ? [node['Index Name']] : []))),
    seqScan: onMessages.some((node) => node['Node Type'] === 'Seq Scan'),
    ownerConds: onMessages.flatMap((node) => (node['Index Name'] && SEARCH_INDEXES.includes(node['Index Name']) ? [node['Index Cond'] ?? ''] : [])),
  };
}

describe('history search at scale: the scope inside the index, a bounded candidate set', () => {
  const database = useTestDatabase();
  const search = (query: string, options: Partial<SearchOptions> = {}, userId = 'u0') => searchHistory(database.db, { profileId: 'main', userId }, { limit: 10, ...options, query });

  beforeAll(async () => {
    await seedHistory(database.db);
  });

  it.each([
    ['English, common word', 'ubiquity', 'fulltext'],
    ['English, rare word', 'rarexyz', 'fulltext'],
    ['English, two words', 'deployment ubiquity', 'fulltext'],
    ['English, phrase', '"deployment checklist"', 'fulltext'],
    ['English, OR / exclusion', 'rarexyz OR recentia -ubiquity', 'fulltext'],
    ['English, prefix', 'recent', 'fulltext'],
    ['code identifiers and paths', 'src/users/repository.ts', 'fulltext'],
    ['tool names and arguments', 'kubectl', 'fulltext'],
    ['CJK, 3+ characters', '服务器', 'trigram'],
    ['CJK, 1-2 characters', '北京', 'recent-scan'],
    ['mixed Latin + CJK', 'deployment 服务器', 'mixed'],
    ['stop words only', 'the', 'trigram'],
  ])('%s (%s): reads through the owner-scoped indexes, never the whole table', async (_name, query, route) => {
    expect((await search(query)).route).toBe(route);
    const { nodes } = await explain(database.db, query);
    const access = messageAccess(nodes);
    expect(access.seqScan).toBe(false);
    // Every scan of messages is one of the scoped indexes, or the primary key for the candidates' rows.
    expect([...access.indexes].filter((name) => !SEARCH_INDEXES.includes(name) && name !== 'messages_pkey' && name !== SESSION_KEY)).toEqual([]);
    expect(access.ownerConds.length).toBeGreaterThan(0);
    expect(access.ownerConds.every((cond) => cond.includes("owner_id = 'u0'"))).toBe(true);
  });

  it('asks the composite GIN index, led by the owner, for a word the newest messages do not hold enough of', async () => {
    const { nodes } = await explain(database.db, 'rarexyz');
    // rarexyz is its own stem, so it is also looked for at word starts through the trigram index: the
    // planner may take either composite index (the owner and the period leading), or both.
    const gin = nodes.filter((node) => ['messages_scope_vector_idx', 'messages_scope_trgm_idx'].includes(node['Index Name'] ?? '') && (node['Actual Loops'] ?? 0) > 0);
    expect(gin.length).toBeGreaterThan(0);
    expect(gin.every((node) => /owner_id = 'u0'/.test(node['Index Cond'] ?? ''))).toBe(true);
    expect((await search('rarexyz', { limit: 50 })).matched).toBe(12);
  });

  it('skips the walk for a term the statistics show too sparse for it, and finds the same messages', async () => {
    const walked = (nodes: PlanNode[]) =>
      nodes
        .filter((node) => node['Index Name'] === 'messages_scope_time_idx' && node['Node Type'] === 'Index Scan' && (node['Actual Loops'] ?? 0) > 0)
        .reduce((sum, node) => sum + (node['Actual Rows'] ?? 0), 0);
    const stats = await messageStats(database.db);
    expect(stats?.owners.get('u0')).toBeGreaterThan(0.3);
    // rarexyz: 12 of 60,000 messages, not among the listed lexemes; middling: 1 in 100, listed
    // (too sparse for the walk too); ubiquity: 1 in 4.
    expect(walkPays(ownerDensityBound(stats!, 'u0', operandShare(stats!, "'rarexyz':*")!), MIN_CANDIDATE_ROWS)).toBe(false);
    expect(walkPays(ownerDensityBound(stats!, 'u0', operandShare(stats!, "'middl':*")!), MIN_CANDIDATE_ROWS)).toBe(false);
    expect(walkPays(ownerDensityBound(stats!, 'u0', operandShare(stats!, "'ubiqu':*")!), MIN_CANDIDATE_ROWS)).toBe(true);
    expect(walked((await explain(database.db, 'rarexyz')).nodes)).toBe(0);
    expect(walked((await explain(database.db, 'middling')).nodes)).toBe(0);
    expect(walked((await explain(database.db, 'ubiquity')).nodes)).toBeGreaterThan(0);
    // Someone the statistics do not list among the common owners (a small history) is walked.
    expect(ownerDensityBound(stats!, 'nobody', 0.001)).toBeNull();
    expect((await search('rarexyz', { limit: 50 })).matched).toBe(12);
  });

  it('finds an unstemmed prefix (serializ: serialization, stemmed serial) through the owner-scoped indexes', async () => {
    const { nodes } = await explain(database.db, 'serializ');
    const gin = nodes.filter((node) => (node['Actual Loops'] ?? 0) > 0 && (node['Index Name'] ?? '').startsWith('messages_scope_'));
    expect(gin.length).toBeGreaterThan(0);
    expect(gin.every((node) => /owner_id = 'u0'/.test(node['Index Cond'] ?? ''))).toBe(true);
    expect((await search('serializ', { limit: 50 })).matched).toBe(12);
    expect((await search('serializx', { limit: 50 })).matched).toBe(0);
  });

  it('reads a term too sparse for the walk period by period, newest first, and finds the same newest and oldest matches', async () => {
    const { nodes } = await explain(database.db, 'middling', { limit: 50, hitsPerSession: 10 });
    const byPeriod = nodes.filter((node) => node['Index Name'] === 'messages_scope_vector_idx' && (node['Actual Loops'] ?? 0) > 0 && /= p(_\d+)?\.p\)/.test(node['Index Cond'] ?? ''));
    // The newest periods first, one GIN scan each with the owner, the period and the term in its condition.
    expect(byPeriod.length).toBeGreaterThan(0);
    expect(byPeriod.every((node) => /owner_id = 'u0'.*= p(_\d+)?\.p\).*search_vector @@/.test(node['Index Cond'] ?? ''))).toBe(true);
    const periodScans = byPeriod.reduce((sum, node) => sum + (node['Actual Loops'] ?? 0), 0);
    expect(periodScans).toBeLessThanOrEqual(FIRST_PERIODS + MORE_PERIODS_MAX);
    expect(periodScans).toBeLessThan(Math.ceil((MESSAGES * SPACING_SECONDS) / SEARCH_PERIOD_SECONDS));
    // The periods found the same newest candidates a sort of every match would.
    const result = await search('middling', { sort: 'newest', limit: 50, hitsPerSession: 10 });
    const newest = await sql<{ id: string }>`
      SELECT id::text AS id FROM messages WHERE owner_id = 'u0' AND search_vector @@ to_tsquery('english', 'middling')
      ORDER BY created_at DESC LIMIT ${CANDIDATE_ROWS}`.execute(database.db);
    const expected = new Set(newest.rows.map((row) => row.id));
    const hits = result.sessions.flatMap((s) => s.hits.map((hit) => hit.messageId));
    expect(hits.length).toBe(50);
    expect(hits.every((id) => expected.has(id))).toBe(true);
    const oldest = await search('middling', { sort: 'oldest', limit: 1, hitsPerSession: 1 });
    const first = await sql<{ id: string }>`
      SELECT id::text AS id FROM messages WHERE owner_id = 'u0' AND search_vector @@ to_tsquery('english', 'middling')
      ORDER BY created_at ASC LIMIT 1`.execute(database.db);
    expect(oldest.sessions[0]?.hits[0]?.messageId).toBe(first.rows[0]?.id);
  });

  it('drives each period scan by the rarest word alone and checks the others on its rows', async () => {
    const { nodes } = await explain(database.db, 'middling deployment', { limit: 50, hitsPerSession: 10 });
    const byPeriod = nodes.filter((node) => (node['Index Name'] ?? '').startsWith('messages_scope_') && (node['Actual Loops'] ?? 0) > 0 && /= p(_\d+)?\.p\)/.test(node['Index Cond'] ?? ''));
    expect(byPeriod.length).toBeGreaterThan(0);
    // middling is 1 in 100 messages, deployment 1 in 17: only the rarer is an index condition.
    expect(byPeriod.every((node) => (node['Index Cond'] ?? '').includes('middl') && !(node['Index Cond'] ?? '').includes('deploy'))).toBe(true);
    const both = await sql<{ n: string }>`
      SELECT count(*)::text AS n FROM messages
      WHERE owner_id = 'u0' AND search_vector @@ to_tsquery('english', 'middling:* & deployment:*')`.execute(database.db);
    const expected = Number(both.rows[0]?.n);
    expect(expected).toBeGreaterThan(0);
    expect((await search('middling deployment', { limit: 50, hitsPerSession: 10 })).matched).toBe(expected);
  });

  it('looks up the sessions seen without being owned through indexes, and leaves that branch out when there are none', async () => {
    const plan = await sql<{ 'QUERY PLAN': { Plan: PlanNode }[] }>`
      EXPLAIN (ANALYZE, FORMAT JSON) SELECT ${otherVisibleChats({ profileId: 'main', userId: 'u0' })} AS ids`.execute(database.db);
    const root = plan.rows[0]?.['QUERY PLAN'][0]?.Plan;
    expect(root).toBeDefined();
    // Nothing shared, no events: the sessions are not read (a hash join may open its scan for a row or two).
    const sessionRows = nodesOf(root!)
      .filter((node) => node['Relation Name'] === 'sessions')
      .reduce((sum, node) => sum + ((node['Actual Rows'] ?? 0) + (node['Rows Removed by Filter'] ?? 0)) * (node['Actual Loops'] ?? 0), 0);
    expect(sessionRows).toBeLessThan(10);
    const { nodes } = await explain(database.db, 'rarexyz');
    expect(nodes.filter((node) => node['Index Name'] === SESSION_KEY)).toEqual([]);
  });

  it("bounds a common word's work: the rows read stay under the walk however many messages match", async () => {
    const matches = async (word: string) =>
      Number((await sql<{ n: string }>`SELECT count(*)::text AS n FROM messages WHERE owner_id = 'u0' AND search_vector @@ to_tsquery('english', ${word})`.execute(database.db)).rows[0]?.n);
    // Same density among the newest messages, seven times the matches over all history.
    expect(await matches('ubiquity')).toBe(7200);
    expect(await matches('recentia')).toBe(1040);
    const bound = CANDIDATE_WALK_ROWS + 2 * CANDIDATE_ROWS;
    for (const sort of ['relevance', 'newest'] as const) {
      const wide = { sort, limit: 50, hitsPerSession: 10 };
      const everywhere = messageRowsRead((await explain(database.db, 'ubiquity', wide)).nodes);
      const recentOnly = messageRowsRead((await explain(database.db, 'recentia', wide)).nodes);
      expect(everywhere).toBeLessThan(bound);
      expect(everywhere).toBeLessThan(7200 / 3);
      expect(everywhere).toBeLessThanOrEqual(recentOnly * 1.2);
      expect((await search('ubiquity', wide)).matched).toBe(CANDIDATE_ROWS);
      // A search asking for fewer sessions ranks fewer candidates, and reads fewer rows.
      expect((await search('ubiquity', { sort, limit: 3, hitsPerSession: 1 })).matched).toBe(MIN_CANDIDATE_ROWS);
      expect(messageRowsRead((await explain(database.db, 'ubiquity', { sort, limit: 3, hitsPerSession: 1 })).nodes)).toBeLessThan(everywhere);
    }
  });

  it('ranks within the newest matches: every hit of a common word is among its newest candidates', async () => {
    const result = await search('ubiquity', { limit: 50, hitsPerSession: 10 });
    const cutoff = await sql<{ at: Date }>`
      SELECT created_at AS at FROM messages WHERE owner_id = 'u0' AND search_vector @@ to_tsquery('english', 'ubiquity')
      ORDER BY created_at DESC OFFSET ${CANDIDATE_ROWS - 1} LIMIT 1`.execute(database.db);
    const oldestCandidate = cutoff.rows[0]?.at.getTime() ?? Infinity;
    const hits = result.sessions.flatMap((s) => s.hits);
    expect(hits.length).toBeGreaterThan(100);
    expect(hits.every((hit) => hit.createdAt.getTime() >= oldestCandidate)).toBe(true);
    const oldest = await search('ubiquity', { sort: 'oldest' });
    expect(oldest.sessions[0]?.hits[0]?.createdAt.toISOString()).toBe('2025-01-01T00:40:00.000Z');
  });
});

describe('history search: what is found', () => {
  const database = useTestDatabase();
  let ids: Record<string, string>;
  const found = async (userId: string, query: string) => {
    const result = await searchHistory(database.db, { profileId: 'main', userId }, { query, limit: 20 });
    const keys = Object.fromEntries(Object.entries(ids).map(([key, id]) => [id, key]));
    return result.sessions.map((s) => keys[s.sessionId]).sort();
  };

  const addSession = async (key: string, owner: string, chatType: string, texts: string[]) => {
    const id = randomUUID();
    ids[key] = id;
    await database.db
      .insertInto('sessions')
      .values({ id, profile_id: 'main', session_key: `k:${key}`, platform: 'telegram', chat_type: chatType, chat_id: key, origin_user_id: owner })
      .execute();
    await sql`SELECT herald_append_messages(${id}::uuid, NULL, ${JSON.stringify(texts.map((content) => ({ role: 'user', content })))}::jsonb)`.execute(database.db);
    return id;
  };

  beforeAll(async () => {
    ids = {};
    await addSession('serial', 'ann', 'dm', ['How do I fix the serialization of the payload?', 'Serializers are slow.']);
    await addSession('quiet', 'ann', 'dm', ['Deployment is done. Nothing else.']);
    await addSession('cjk', 'ann', 'dm', ['明天去北京出差', '夜']);
    const group = await addSession('group', 'bob', 'group', ['grouponly plans for the offsite']);
    await database.db.insertInto('inbound_events').values({ id: randomUUID(), session_id: group, platform: 'telegram', user_id: 'ann', text: 'hi', status: 'done' }).execute();
    await addSession('bobs', 'bob', 'dm', ['grouponly is also here, in a direct chat']);
  });

  it('copies the session owner, profile and platform onto every appended message, and follows a session that changes', async () => {
    const rows = await sql<{ owner_id: string; profile_id: string; platform: string }>`
      SELECT owner_id, profile_id, platform FROM messages WHERE session_id = ${ids.serial}::uuid`.execute(database.db);
    expect(rows.rows).toEqual([
      { owner_id: 'ann', profile_id: 'main', platform: 'telegram' },
      { owner_id: 'ann', profile_id: 'main', platform: 'telegram' },
    ]);
    // A later change of user ids (say, qualified by platform) moves the messages with the session.
    await sql`UPDATE sessions SET origin_user_id = 'telegram:ann' WHERE id = ${ids.quiet}::uuid`.execute(database.db);
    try {
      const moved = await sql<{ owner_id: string }>`SELECT DISTINCT owner_id FROM messages WHERE session_id = ${ids.quiet}::uuid`.execute(database.db);
      expect(moved.rows).toEqual([{ owner_id: 'telegram:ann' }]);
      expect(await found('ann', 'deployment')).toEqual([]);
      expect(await found('telegram:ann', 'deployment')).toEqual(['quiet']);
    } finally {
      await sql`UPDATE sessions SET origin_user_id = 'ann' WHERE id = ${ids.quiet}::uuid`.execute(database.db);
    }
  });

  it('matches a prefix on the unstemmed form: serializ finds serialization, stemmed serial', async () => {
    expect(await found('ann', 'serializ')).toEqual(['serial']);
    expect(await found('ann', 'serialization')).toEqual(['serial']);
    expect(await found('ann', 'serializ -payload')).toEqual(['serial']);
    expect(await found('ann', 'serializx')).toEqual([]);
  });

  it('finds a query made only of stop words, as whole words', async () => {
    expect(await found('ann', 'how do i')).toEqual(['serial']);
    expect(await found('ann', 'the')).toEqual(['group', 'serial']);
    expect(await found('ann', '"nothing else"')).toEqual(['quiet']);
    // "the" is a word, not a substring: "nothing else" holds no "the".
    expect(await found('ann', 'the OR is')).toEqual(['group', 'quiet', 'serial']);
  });

  it('finds CJK of any length, phrases, OR and exclusion', async () => {
    expect(await found('ann', '北京出差')).toEqual(['cjk']);
    expect(await found('ann', '北京')).toEqual(['cjk']);
    expect(await found('ann', '夜')).toEqual(['cjk']);
    expect(await found('ann', '"fix the serialization"')).toEqual(['serial']);
    expect(await found('ann', 'deployment OR 北京')).toEqual(['cjk', 'quiet']);
    expect(await found('ann', 'deployment OR payload -serializers')).toEqual(['quiet']);
  });

  it('finds the group chats a person wrote in, through the same indexes, and nobody else’s', async () => {
    expect(await found('ann', 'grouponly')).toEqual(['group']);
    expect(await found('bob', 'grouponly')).toEqual(['bobs', 'group']);
    expect(await found('carol', 'grouponly')).toEqual([]);
  });
});
