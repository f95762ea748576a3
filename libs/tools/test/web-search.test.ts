import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '@herald/core';
import type { WebSearchConfig } from '@herald/core';
import { builtinRegistry } from '../src/index.ts';
import { ToolExposure } from '../src/shared/tool-policy.ts';
import { ToolGate } from '../src/shared/tool-gate.ts';
import { createWebSearchTool } from '../src/web/web-search-tool.ts';
import { FAKE_SEARCH_KEY, startFakeSearchEngines } from '../../../test/support/fake-search.ts';
import type { FakeSearchEngines } from '../../../test/support/fake-search.ts';
import { offlineContext } from './call-context.ts';

let engines: FakeSearchEngines;
beforeAll(async () => {
  engines = await startFakeSearchEngines();
});
afterAll(() => engines.close());

const BASE_ENV = {};

function configured(env: Record<string, string>): WebSearchConfig {
  return loadConfig({ ...BASE_ENV, ...env }).tools.webSearch;
}

async function search(backend: WebSearchConfig, args: unknown) {
  const registry = builtinRegistry({ webSearch: backend });
  const gate = new ToolGate({ registry, offered: ['web_search'], permitted: ['web_search'], approvalTimeoutMs: 1000 });
  return gate.execute({ id: 'c1', name: 'web_search', arguments: JSON.stringify(args) }, offlineContext());
}

describe('web_search', () => {
  it('asks SearXNG through its JSON API and returns title, url and snippet', async () => {
    const backend = configured({ HERALD_WEB_SEARCH: 'searxng', SEARXNG_URL: `${engines.searxng.origin}/` });
    const result = await createWebSearchTool(backend).execute({ query: 'herald agent', limit: 3 }, offlineContext());
    const parsed = JSON.parse(result) as { results: { title: string; url: string; snippet: string }[] };
    expect(parsed.results).toEqual([
      { title: 'herald agent result 0', url: 'https://example.org/herald%20agent/0', snippet: 'searxng snippet 0' },
      { title: 'herald agent result 1', url: 'https://example.org/herald%20agent/1', snippet: 'searxng snippet 1' },
      { title: 'herald agent result 2', url: 'https://example.org/herald%20agent/2', snippet: 'searxng snippet 2' },
    ]);
    expect(engines.searxng.requests.at(-1)?.query).toMatchObject({ q: 'herald agent', format: 'json' });
  });

  it('asks Brave with its subscription token and the count asked for', async () => {
    const backend = configured({ HERALD_WEB_SEARCH: 'brave', BRAVE_API_KEY: FAKE_SEARCH_KEY, BRAVE_API_URL: `${engines.brave.origin}/res/v1/web/search` });
    const parsed = JSON.parse(await createWebSearchTool(backend).execute({ query: 'postgres leases' }, offlineContext())) as { results: { snippet: string }[] };
    expect(parsed.results).toHaveLength(5);
    expect(parsed.results[1]).toEqual({ title: 'postgres leases result 1', url: 'https://example.org/postgres%20leases/1', snippet: 'brave snippet 1' });
    expect(engines.brave.requests.at(-1)?.query).toMatchObject({ q: 'postgres leases', count: '5' });
  });

  it('asks Tavily with a bearer key and max_results', async () => {
    const backend = configured({ HERALD_WEB_SEARCH: 'tavily', TAVILY_API_KEY: FAKE_SEARCH_KEY, TAVILY_API_URL: engines.tavily.origin });
    const parsed = JSON.parse(await createWebSearchTool(backend).execute({ query: 'bubblewrap', limit: 2 }, offlineContext())) as { results: unknown[] };
    expect(parsed.results).toEqual([
      { title: 'bubblewrap result 0', url: 'https://example.org/bubblewrap/0', snippet: 'tavily snippet 0' },
      { title: 'bubblewrap result 1', url: 'https://example.org/bubblewrap/1', snippet: 'tavily snippet 1' },
    ]);
    expect(engines.tavily.requests.at(-1)?.body).toMatchObject({ query: 'bubblewrap', max_results: 2 });
  });

  it('gives a backend error to the model as a readable tool error', async () => {
    const brave = await search({ backend: 'brave', url: `${engines.brave.origin}/res/v1/web/search`, apiKey: FAKE_SEARCH_KEY }, { query: 'fail' });
    expect(brave.isError).toBe(true);
    expect(brave.content).toContain('brave answered HTTP 429: Request rate limit exceeded for plan.');
    const tavily = await search({ backend: 'tavily', url: engines.tavily.origin, apiKey: 'wrong' }, { query: 'x' });
    expect(tavily.content).toContain('tavily answered HTTP 401: Unauthorized: missing or invalid API key.');
    const searxng = await search({ backend: 'searxng', url: 'http://127.0.0.1:1' }, { query: 'x' });
    expect(searxng.content).toContain('the search engine (searxng) could not be reached');
    const asked = await search({ backend: 'searxng', url: engines.searxng.origin }, { query: 'x', limit: 50 });
    expect(asked.errorKind).toBe('invalid');
  });

  it('is not offered without a backend, and a chosen backend needs its setting', () => {
    const policy = { enabled: ['web'] };
    const without = new ToolExposure(builtinRegistry({ webSearch: configured({}) }));
    expect(without.resolve({ policy, platform: 'api', role: 'chat' })).toEqual(['web_extract']);
    const withEngine = new ToolExposure(builtinRegistry({ webSearch: configured({ HERALD_WEB_SEARCH: 'searxng', SEARXNG_URL: engines.searxng.origin }) }));
    expect(withEngine.resolve({ policy, platform: 'api', role: 'chat' })).toEqual(['web_extract', 'web_search']);
    expect(() => configured({ HERALD_WEB_SEARCH: 'brave' })).toThrow(/BRAVE_API_KEY: required when HERALD_WEB_SEARCH is brave/);
    expect(() => configured({ HERALD_WEB_SEARCH: 'bing' })).toThrow(/HERALD_WEB_SEARCH: expected searxng, brave or tavily/);
  });
});
