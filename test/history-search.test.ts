import { spawn } from 'node:child_process';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { apiUserId } from '@herald/core';
import { searchHistory } from '@herald/search';
import type { SearchOptions } from '@herald/search';
import { builtinRegistry, ToolGate } from '@herald/tools';
import type { ToolContext } from '@herald/tools';
import { HERALD_BIN, PROCESS_START_MS, startStack, TEST_TOKEN } from './support/stack.ts';
import type { Stack } from './support/stack.ts';
import { seedSearchCorpus } from './support/search-corpus.ts';

describe('history search', () => {
  let stack: Stack;
  let ids: Map<string, string>;
  let keys: Map<string, string>;

  const id = (key: string) => ids.get(key) ?? '';
  /** The session keys found for a person, in result order. */
  const found = async (userId: string, query: string, options: Partial<SearchOptions> = {}) => {
    const result = await searchHistory(stack.database.db, { profileId: 'main', userId: apiUserId(userId) }, { limit: 20, ...options, query });
    return { keys: result.sessions.map((s) => keys.get(s.sessionId)), result };
  };
  const api = async (params: Record<string, string>) => {
    const query = new URLSearchParams(params).toString();
    return stack.get(`/v1/search?${query}`);
  };

  beforeAll(async () => {
    stack = await startStack({ workers: 0 });
    ids = await seedSearchCorpus(stack.database.db);
    keys = new Map([...ids].map(([key, value]) => [value, key]));
  });
  afterAll(async () => {
    await stack.stop();
  });

  describe('English through the tsvector index', () => {
    it('stems: "deployment" finds "deploying", and the other way round', async () => {
      const deployment = await found('alice', 'deployment');
      expect(deployment.result.route).toBe('fulltext');
      expect(deployment.keys.sort()).toEqual(['a-code', 'a-deploy']);
      expect((await found('alice', 'deploying')).keys).toContain('a-deploy');
    });

    it('matches prefixes, phrases, OR and exclusions', async () => {
      expect((await found('alice', 'deplo')).keys).toEqual(expect.arrayContaining(['a-deploy', 'a-code']));
      expect((await found('alice', '"deployment checklist"')).keys).toEqual(['a-deploy']);
      expect((await found('alice', '"checklist deployment"')).keys).toEqual([]);
      expect((await found('alice', 'ramen OR getUserById')).keys.sort()).toEqual(['a-code', 'g-lunch']);
      expect((await found('alice', 'deploying', { roles: ['user'] })).keys).toEqual(['a-deploy']);
      expect((await found('alice', 'deploying -staging', { roles: ['user'] })).keys).toEqual([]);
    });

    it('finds tool names and tool-call arguments', async () => {
      const kubectl = await found('alice', 'kubectl', { roles: ['assistant'] });
      expect(kubectl.keys).toEqual(['a-deploy']);
      const terminal = await found('alice', 'terminal', { roles: ['tool'] });
      expect(terminal.result.sessions[0]?.hits[0]?.toolName).toBe('terminal');
    });

    it('finds code identifiers and paths', async () => {
      expect((await found('alice', 'getUserById')).keys).toEqual(['a-code']);
      expect((await found('alice', 'src/users/repository.ts')).keys).toEqual(['a-code']);
    });

    it('highlights the matched words in snippets', async () => {
      const { result } = await found('alice', 'checklist');
      expect(result.sessions[0]?.hits[0]?.snippet).toContain('>>>checklist<<<');
    });

    it('finds a phrase of stop words by substring', async () => {
      const hamlet = await found('alice', '"to be or not to be"');
      expect(hamlet.keys).toEqual(['a-misc']);
    });
  });

  describe('Chinese, Japanese and Korean', () => {
    it('uses the trigram index for three or more characters', async () => {
      const chinese = await found('alice', '北京出差');
      expect(chinese.result.route).toBe('trigram');
      expect(chinese.keys).toEqual(['a-beijing']);
      expect(chinese.result.sessions[0]?.hits[0]?.snippet).toContain('>>>北京出差<<<');
      expect((await found('alice', '東京タワー')).keys).toEqual(['a-tokyo']);
      expect((await found('alice', '서울에서')).keys).toEqual(['a-tokyo']);
    });

    it('answers one and two characters from the recent scan', async () => {
      const beijing = await found('alice', '北京');
      expect(beijing.result.route).toBe('recent-scan');
      expect(beijing.keys).toEqual(['a-beijing']);
      expect((await found('alice', '회의')).keys).toEqual(['a-tokyo']);
      expect((await found('alice', '夜')).keys).toEqual(['a-tokyo']);
    });

    it('combines CJK and English in one query', async () => {
      const mixed = await found('alice', 'deploy 部署');
      expect(mixed.result.route).toBe('mixed');
      expect(mixed.keys).toEqual(['a-code']);
      expect((await found('alice', '北京 OR ramen')).keys.sort()).toEqual(['a-beijing', 'g-lunch']);
    });

    it('finds emoji', async () => {
      expect((await found('alice', '🚀')).keys).toEqual(['a-misc']);
    });
  });

  describe('filters and order', () => {
    it('filters by role, platform, session and dates', async () => {
      expect((await found('alice', '北京', { roles: ['assistant'] })).result.sessions[0]?.hits.map((h) => h.role)).toEqual(['assistant']);
      expect((await found('alice', 'deploy OR 北京', { platforms: ['telegram'] })).keys).toEqual(['a-beijing']);
      expect((await found('alice', 'deploy', { sessionId: id('a-code') })).keys).toEqual(['a-code']);
      expect((await found('alice', 'deploy', { from: new Date('2026-05-01') })).keys).toEqual(['a-code']);
      expect((await found('alice', 'deploy', { to: new Date('2026-05-01') })).keys).toEqual(['a-deploy']);
    });

    it('sorts by time when asked', async () => {
      expect((await found('alice', 'deploy', { sort: 'newest' })).keys).toEqual(['a-code', 'a-deploy']);
      expect((await found('alice', 'deploy', { sort: 'oldest' })).keys).toEqual(['a-deploy', 'a-code']);
    });
  });

  describe('scope', () => {
    it('shows each person only their own sessions and the group chats they wrote in', async () => {
      expect((await found('alice', 'payroll')).keys).toEqual([]);
      expect((await found('bob', 'payroll')).keys).toEqual(['b-secret']);
      expect((await found('alice', '北京的')).keys).toEqual(['a-beijing']);
      expect((await found('bob', '北京的')).keys).toEqual(['b-secret']);
      expect((await found('alice', 'ramen')).keys).toEqual(['g-lunch']);
      expect((await found('alice', 'budget')).keys).toEqual([]);
      expect((await found('alice', 'secret', { sessionId: id('b-secret') })).keys).toEqual([]);
    });

    it('opens chat types the profile shares to everyone in it, for the API and the tool alike', async () => {
      const shared = await stack.patch('/v1/profiles/main', { search_shared_chat_types: ['group'] });
      expect(shared.status).toBe(200);
      expect(shared.body.search_shared_chat_types).toEqual(['group']);
      try {
        const response = await api({ q: 'budget', user_id: 'alice' });
        expect(response.status).toBe(200);
        expect(response.body.sessions.map((s: { session_id: string }) => keys.get(s.session_id))).toEqual(['g-budget']);
        expect(JSON.parse(await runTool('alice', { query: 'budget' })).results).toHaveLength(1);
        // Direct chats stay private whatever the setting.
        expect((await api({ q: 'payroll', user_id: 'alice' })).body.sessions).toEqual([]);
      } finally {
        await stack.patch('/v1/profiles/main', { search_shared_chat_types: [] });
      }
      expect((await api({ q: 'budget', user_id: 'alice' })).body.sessions).toEqual([]);
    });
  });

  const runTool = async (userId: string, args: Record<string, unknown>, sessionId = '00000000-0000-4000-8000-000000000000') => {
    const context: ToolContext = {
      sessionId,
      turnId: '00000000-0000-4000-8000-000000000001',
      profileId: 'main',
      userId: apiUserId(userId),
      platform: 'api',
      role: 'chat',
      workspaceDir: '/nonexistent',
      db: stack.database.db,
      signal: new AbortController().signal,
      fencedWrite: () => Promise.reject(new Error('session_search must not write')),
    };
    const gate = new ToolGate({ registry: builtinRegistry(), offered: ['session_search'], permitted: ['session_search'], approvalTimeoutMs: 1000 });
    const outcome = await gate.execute({ id: 'call-1', name: 'session_search', arguments: JSON.stringify(args) }, context);
    expect(outcome.isError).toBe(false);
    return outcome.content;
  };

  describe('the session_search tool', () => {
    it('discovers sessions with snippets and message ids, leaving out the current session', async () => {
      const discover = JSON.parse(await runTool('alice', { query: 'deployment' }));
      expect(discover).toMatchObject({ success: true, mode: 'discover', count: 2 });
      expect(discover.results[0].session_id).toBe(id('a-deploy'));
      expect(discover.results[0].matches[0].snippet).toMatch(/>>>deploy/i);
      const fromInside = JSON.parse(await runTool('alice', { query: 'deployment' }, id('a-deploy')));
      expect(fromInside.results.map((r: { session_id: string }) => r.session_id)).toEqual([id('a-code')]);
      const limited = JSON.parse(await runTool('alice', { query: 'deploy OR 北京 OR ramen', limit: 1 }));
      expect(limited.results).toHaveLength(1);
    });

    it('scrolls around a match and reads a session, only within scope', async () => {
      const discover = JSON.parse(await runTool('alice', { query: 'kubectl', role_filter: 'assistant' }));
      const match = discover.results[0].matches[0];
      const around = JSON.parse(await runTool('alice', { session_id: id('a-deploy'), around_message_id: match.message_id, window: 1 }));
      expect(around.mode).toBe('scroll');
      expect(around.messages).toHaveLength(3);
      expect(around.messages.find((m: { anchor?: boolean }) => m.anchor).message_id).toBe(match.message_id);
      expect(around.messages_after).toBe(1);
      const read = JSON.parse(await runTool('alice', { session_id: id('a-deploy') }));
      expect(read.messages).toHaveLength(4);
      const stranger = JSON.parse(await runTool('alice', { session_id: id('b-secret') }));
      expect(stranger).toMatchObject({ success: false });
      expect(JSON.stringify(stranger)).not.toContain('payroll');
      const browse = JSON.parse(await runTool('bob', {}));
      expect(browse.results.map((r: { session_id: string }) => keys.get(r.session_id)).sort()).toEqual(['b-secret', 'g-budget', 'g-lunch']);
    });

    it('answers bad queries and roles with an error the model can read', async () => {
      expect(JSON.parse(await runTool('alice', { query: 'OR AND -' }))).toMatchObject({ success: false });
      expect(JSON.parse(await runTool('alice', { query: 'deploy', role_filter: 'system' })).error).toMatch(/role_filter/);
    });
  });

  describe('GET /v1/search', () => {
    it('returns sessions with dated, highlighted hits', async () => {
      const response = await api({ q: 'deployment', user_id: 'alice', role: 'user,assistant', limit: '5' });
      expect(response.status).toBe(200);
      expect(response.body).toMatchObject({ query: 'deployment', route: 'fulltext' });
      const first = response.body.sessions[0];
      expect(first.session_id).toBe(id('a-deploy'));
      expect(first.started_at).toBe('2026-01-10T09:00:00.000Z');
      expect(first.hits[0].created_at).toMatch(/^2026-01-10T/);
      expect(first.hits[0].snippet).toContain('>>>');
    });

    it('answers bad queries with results or a 400 naming the field, never a 500', async () => {
      const cases: [string, number][] = [
        ['"deploy', 200],
        ['deployment"', 200],
        ['OR AND NOT', 400],
        ['-deploy', 400],
        ['"" ()', 400],
        ['🚀', 200],
        ['😀😀', 200],
        ["'; DROP TABLE messages; --", 200],
        ['%_\\', 400],
        ['a:* & !b | (c', 200],
        ['deploy'.repeat(2000), 400],
        ['x '.repeat(40), 400],
        ['   ', 400],
      ];
      for (const [q, status] of cases) {
        const response = await api({ q, user_id: 'alice' });
        expect({ q: q.slice(0, 40), status: response.status }).toEqual({ q: q.slice(0, 40), status });
        if (status === 400) expect(response.body.error.field).toBe('q');
      }
      expect((await api({ q: '"deploy', user_id: 'alice' })).body.sessions.length).toBeGreaterThan(0);
      expect((await api({ q: "'; DROP TABLE messages; --", user_id: 'alice' })).body.sessions).toEqual([]);
      expect((await found('alice', 'deployment')).keys).toHaveLength(2);
    });

    it('refuses bad parameters with a 400 naming the field', async () => {
      const bad: [Record<string, string>, string][] = [
        [{ user_id: 'alice' }, 'q'],
        [{ q: 'deploy' }, 'user_id'],
        [{ q: 'deploy', user_id: 'alice', role: 'system' }, 'role'],
        [{ q: 'deploy', user_id: 'alice', sort: 'best' }, 'sort'],
        [{ q: 'deploy', user_id: 'alice', from: 'yesterday' }, 'from'],
        [{ q: 'deploy', user_id: 'alice', from: '2026-05-01', to: '2026-01-01' }, 'to'],
        [{ q: 'deploy', user_id: 'alice', limit: '0' }, 'limit'],
        [{ q: 'deploy', user_id: 'alice', session_id: 'nope' }, 'session_id'],
      ];
      for (const [params, field] of bad) {
        const response = await api(params);
        expect({ field, status: response.status, got: response.body.error?.field }).toEqual({ field, status: 400, got: field });
      }
      expect((await api({ q: 'deploy', user_id: 'alice', profile: 'nope' })).status).toBe(404);
      const unauthorized = await fetch(`${stack.url}/v1/search?q=deploy&user_id=alice`);
      expect(unauthorized.status).toBe(401);
    });
  });

  describe('herald search', { timeout: 3 * PROCESS_START_MS }, () => {
    const herald = (args: string[]) =>
      new Promise<{ code: number | null; output: string }>((resolve) => {
        const child = spawn(process.execPath, [HERALD_BIN, 'search', ...args], {
          env: { ...process.env, HERALD_URL: stack.url, HERALD_API_TOKEN: TEST_TOKEN, DATABASE_URL: stack.database.url, LOG_LEVEL: 'silent' },
          stdio: ['ignore', 'pipe', 'pipe'],
        });
        let output = '';
        child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
        child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
        child.once('exit', (code) => resolve({ code, output }));
      });

    it('prints sessions and highlighted hits for a person, and the API error for a bad query', async () => {
      const result = await herald(['北京出差', '--user', 'alice']);
      expect(result.code).toBe(0);
      expect(result.output).toContain(`session ${id('a-beijing')}  telegram/dm  started 2026-03-02 09:00`);
      expect(result.output).toContain('>>>北京出差<<<');
      const json = await herald(['deployment', '--user', 'alice', '--sort', 'oldest', '--json']);
      expect(JSON.parse(json.output).sessions.map((s: { session_id: string }) => s.session_id)).toEqual([id('a-deploy'), id('a-code')]);
      const bad = await herald(['OR', '--user', 'alice']);
      expect(bad.code).toBe(1);
      expect(bad.output).toMatch(/search failed \(400\): q: query has no words/);
    });
  });
});
