import { sendJson, startFakeHttp } from './fake-http.ts';
import type { FakeHttpServer } from './fake-http.ts';

/**
 * Search engines speaking their real JSON: SearXNG's `/search?format=json`, Brave's
 * `/res/v1/web/search` (X-Subscription-Token) and Tavily's `POST /search` (Bearer key). Each
 * answers the query it was asked with `hits` results whose titles name the query; a query of
 * `fail` gets the engine's own error shape.
 */
export interface FakeSearchEngines {
  searxng: FakeHttpServer;
  brave: FakeHttpServer;
  tavily: FakeHttpServer;
  close(): Promise<void>;
}

export const FAKE_SEARCH_KEY = 'test-search-key';

const hit = (query: string, n: number) => ({ title: `<b>${query}</b> result ${n}`, url: `https://example.org/${encodeURIComponent(query)}/${n}` });

export async function startFakeSearchEngines(hits = 12): Promise<FakeSearchEngines> {
  const searxng = await startFakeHttp((request, response) => {
    if (request.path !== '/search' || request.query.format !== 'json') return sendJson(response, 403, undefined);
    const query = request.query.q ?? '';
    if (query === 'fail') return sendJson(response, 429, undefined);
    const results = Array.from({ length: hits }, (_, n) => ({ ...hit(query, n), content: `searxng snippet ${n}`, engine: 'duckduckgo', score: 1 / (n + 1) }));
    return sendJson(response, 200, { query, number_of_results: hits, results, answers: [], suggestions: [], unresponsive_engines: [] });
  });
  const brave = await startFakeHttp((request, response) => {
    if (request.headers['x-subscription-token'] !== FAKE_SEARCH_KEY) {
      return sendJson(response, 401, { type: 'ErrorResponse', error: { code: 'SUBSCRIPTION_TOKEN_INVALID', detail: 'The provided subscription token is invalid.', status: 401 } });
    }
    const query = request.query.q ?? '';
    const count = Number(request.query.count ?? 20);
    if (query === 'fail') return sendJson(response, 429, { type: 'ErrorResponse', error: { code: 'RATE_LIMITED', detail: 'Request rate limit exceeded for plan.', status: 429 } });
    const results = Array.from({ length: Math.min(count, hits) }, (_, n) => ({ type: 'search_result', ...hit(query, n), description: `brave <strong>snippet</strong> ${n}` }));
    return sendJson(response, 200, { type: 'search', query: { original: query }, web: { type: 'search', results } });
  });
  const tavily = await startFakeHttp((request, response) => {
    if (request.method !== 'POST' || request.path !== '/search') return sendJson(response, 404, { detail: { error: 'Not found' } });
    if (request.headers.authorization !== `Bearer ${FAKE_SEARCH_KEY}`) return sendJson(response, 401, { detail: { error: 'Unauthorized: missing or invalid API key.' } });
    const body = request.body as { query: string; max_results?: number };
    if (body.query === 'fail') return sendJson(response, 432, { detail: { error: "This request exceeds your plan's set usage limit." } });
    const results = Array.from({ length: Math.min(body.max_results ?? 5, hits) }, (_, n) => ({ ...hit(body.query, n), content: `tavily snippet ${n}`, score: 0.9, raw_content: null }));
    return sendJson(response, 200, { query: body.query, answer: null, images: [], results, response_time: 0.4 });
  });
  return {
    searxng,
    brave,
    tavily,
    async close() {
      await Promise.all([searxng.close(), brave.close(), tavily.close()]);
    },
  };
}
