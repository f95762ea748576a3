import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '@herald/core';
import { builtinRegistry, estimateTokens, planToolOffer, ToolExposure } from '@herald/tools';
import { tools as testTools } from './support/test-tools.ts';
import { startFakeOpenAI } from './support/fake-llm.ts';
import type { FakeLLM, FakeRequest } from './support/fake-llm.ts';
import { EVERYTHING_SERVER } from './support/mcp-servers.ts';
import { startStack } from './support/stack.ts';
import type { Stack } from './support/stack.ts';

describe('the tool_search step', () => {
  it('sends every tool while the schemas fit the budget, and defers the non-core ones when they do not', () => {
    const registry = builtinRegistry({ webSearch: { backend: 'searxng', url: 'http://127.0.0.1:1' } });
    for (const tool of testTools) registry.register(tool);
    const offered = new ToolExposure(registry, { pluginTools: testTools.map((t) => t.name) }).resolve({ policy: {}, platform: 'api', role: 'chat' });
    expect(offered).toContain('send_payment');
    const roomy = planToolOffer(registry, offered, loadConfig({}).tools.toolSchemaBudget);
    expect(roomy).toEqual({ offered, sent: offered, deferred: [] });
    const tight = planToolOffer(registry, offered, estimateTokens(registry.definitions(offered)) - 1);
    expect(tight.deferred).toEqual(['send_payment', 'slow_lookup', 'wire_transfer']);
    expect(tight.sent).toContain('tool_search');
    expect(tight.sent).toContain('tool_call');
    expect(tight.sent).toContain('session_search');
    expect(tight.sent).not.toContain('slow_lookup');
    expect(tight.offered).toEqual([...offered, 'tool_call', 'tool_search'].sort());
    // The same set plans the same way: the cached prefix stays stable.
    expect(planToolOffer(registry, [...offered].reverse(), estimateTokens(registry.definitions(offered)) - 1)).toEqual(tight);
  });

  describe('in a session whose tools pass the budget', () => {
    let fake: FakeLLM;
    let stack: Stack;
    beforeAll(async () => {
      fake = await startFakeOpenAI();
      stack = await startStack({ model: fake, testTools: true, env: { HERALD_TOOL_SCHEMA_BUDGET: '1000' } });
    });
    afterAll(() => stack.stop());

    it('offers tool_search and tool_call instead of the large toolset; the model looks a tool up, then calls it', async () => {
      const seen: string[][] = [];
      fake.handler = (request: FakeRequest) => {
        seen.push(request.toolNames);
        const last = request.messages[request.messages.length - 1];
        if (last?.role !== 'tool') return { toolCalls: [{ name: 'tool_search', arguments: { query: 'lookup read' } }] };
        if (last.content.includes('"slow_lookup"')) return { toolCalls: [{ name: 'tool_call', arguments: { name: 'slow_lookup', arguments: { label: 'inv-7' } } }] };
        return { text: `done: ${last.content}` };
      };
      const response = await stack.post('/v1/messages?wait=30', { chat_id: 'big-tools', user_id: 'ada', text: 'find invoice 7' });
      expect(response.body.reply.text).toBe('done: found inv-7');
      for (const names of seen) {
        expect(names).toContain('tool_search');
        expect(names).toContain('tool_call');
        expect(names).not.toContain('slow_lookup');
        expect(names).not.toContain('send_payment');
      }
      const calls = await stack.database.db.selectFrom('messages').select(['role', 'content']).where('session_id', '=', response.body.session_id).where('role', '=', 'tool').orderBy('seq').execute();
      expect(calls.map((c) => c.content)).toEqual([expect.stringContaining('"name":"slow_lookup"'), 'found inv-7']);
    });
  });

  describe('in a session with many MCP tools', { timeout: 120_000 }, () => {
    let fake: FakeLLM;
    let stack: Stack;
    beforeAll(async () => {
      // Three copies of server-everything: some forty MCP tools, far past a small schema budget.
      const file = join(await mkdtemp(join(tmpdir(), 'herald-tool-search-mcp-')), 'mcp.yaml');
      const server = { command: process.execPath, args: [EVERYTHING_SERVER, 'stdio'], approval: 'never' };
      await writeFile(file, JSON.stringify({ servers: { everything: server, second: server, third: server } }));
      fake = await startFakeOpenAI();
      stack = await startStack({
        model: fake,
        env: { HERALD_SANDBOX: 'none', HERALD_TOOL_SCHEMA_BUDGET: '1000', HERALD_MCP_FILE: file, HERALD_MCP_ALLOWED_COMMANDS: process.execPath },
      });
    }, 120_000);
    afterAll(() => stack?.stop());

    it('finds an MCP tool of the session with tool_search and calls it through tool_call', async () => {
      const seen: string[][] = [];
      fake.handler = (request: FakeRequest) => {
        seen.push(request.toolNames);
        const last = request.messages[request.messages.length - 1];
        if (last?.role !== 'tool') return { toolCalls: [{ name: 'tool_search', arguments: { query: 'get-sum everything' } }] };
        if (last.content.includes('"mcp_everything_get-sum"')) return { toolCalls: [{ name: 'tool_call', arguments: { name: 'mcp_everything_get-sum', arguments: { a: 2, b: 40 } } }] };
        return { text: `done: ${last.content}` };
      };
      const response = await stack.post('/v1/messages?wait=60', { chat_id: 'many-mcp', user_id: 'ada', text: 'add 2 and 40' });
      expect(response.body.reply.text).toMatch(/^done: .*42/s);
      for (const names of seen) {
        expect(names).toEqual(expect.arrayContaining(['tool_search', 'tool_call']));
        expect(names.filter((name) => name.startsWith('mcp_'))).toEqual([]);
      }
      const calls = await stack.database.db.selectFrom('messages').select('content').where('session_id', '=', response.body.session_id).where('role', '=', 'tool').orderBy('seq').execute();
      expect(calls).toHaveLength(2);
      expect(JSON.parse(calls[0]?.content ?? '{}').tools.map((tool: { name: string }) => tool.name)).toContain('mcp_everything_get-sum');
    });
  });
});
