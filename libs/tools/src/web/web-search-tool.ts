import { z } from 'zod';
import type { WebSearchConfig } from '@herald/core';
import { defineTool } from '../shared/tool.ts';
import type { Tool } from '../shared/tool.ts';

export const WEB_SEARCH_DEFAULT_RESULTS = 5;
export const WEB_SEARCH_MAX_RESULTS = 10;
const SNIPPET_CHARS = 500;
const SEARCH_TIMEOUT_MS = 20_000;

export interface SearchResult {
  title: string;
  url: string;
  snippet: string;
}

type Backend = NonNullable<WebSearchConfig>;

interface BackendRequest {
  url: string;
  init: RequestInit;
  /** Picks the results out of the engine's JSON, in the engine's order. */
  results(body: unknown): unknown[];
  /** The engine's own names for the snippet field. */
  snippetField: string;
}

const list = (value: unknown): unknown[] => (Array.isArray(value) ? value : []);
const field = (value: unknown, key: string): unknown => (typeof value === 'object' && value !== null ? (value as Record<string, unknown>)[key] : undefined);

/** Each engine's real API: SearXNG's `format=json`, Brave's web search, Tavily's `/search`. */
function backendRequest(backend: Backend, query: string, limit: number): BackendRequest {
  switch (backend.backend) {
    case 'searxng': {
      const url = new URL(`${backend.url}/search`);
      url.search = new URLSearchParams({ q: query, format: 'json' }).toString();
      return { url: url.href, init: { headers: { accept: 'application/json' } }, results: (body) => list(field(body, 'results')), snippetField: 'content' };
    }
    case 'brave': {
      const url = new URL(backend.url);
      url.searchParams.set('q', query);
      url.searchParams.set('count', String(limit));
      const headers = { accept: 'application/json', 'x-subscription-token': backend.apiKey };
      return { url: url.href, init: { headers }, results: (body) => list(field(field(body, 'web'), 'results')), snippetField: 'description' };
    }
    case 'tavily': {
      const headers = { 'content-type': 'application/json', authorization: `Bearer ${backend.apiKey}` };
      const body = JSON.stringify({ query, max_results: limit, search_depth: 'basic' });
      return { url: `${backend.url}/search`, init: { method: 'POST', headers, body }, results: (body) => list(field(body, 'results')), snippetField: 'content' };
    }
  }
}

const text = (value: unknown): string =>
  typeof value === 'string'
    ? value
        .replace(/<[^>]*>/g, '')
        .replace(/\s+/g, ' ')
        .trim()
    : '';

/** Results with a usable http(s) url, cut to `limit`, each snippet to a few hundred characters. */
export function normalizeResults(raw: readonly unknown[], snippetField: string, limit: number): SearchResult[] {
  const results: SearchResult[] = [];
  for (const item of raw) {
    const url = field(item, 'url');
    if (typeof url !== 'string' || !/^https?:\/\//i.test(url)) continue;
    results.push({ title: text(field(item, 'title')), url, snippet: text(field(item, snippetField)).slice(0, SNIPPET_CHARS) });
    if (results.length >= limit) break;
  }
  return results;
}

/** The engine's own message when it gives one (Brave and Tavily put it in the JSON), else the status. */
async function backendError(response: Response, engine: string): Promise<Error> {
  const raw = await response.text().catch(() => '');
  let detail = '';
  try {
    const body: unknown = JSON.parse(raw);
    const message = field(body, 'detail') ?? field(field(body, 'error'), 'detail') ?? field(body, 'error') ?? field(body, 'message');
    detail = typeof message === 'string' ? message : typeof field(message, 'error') === 'string' ? String(field(message, 'error')) : '';
  } catch {
    detail = '';
  }
  return new Error(`${engine} answered HTTP ${response.status}${detail ? `: ${detail.slice(0, 300)}` : ''}; try again later or rephrase`);
}

export async function searchWeb(backend: Backend, query: string, limit: number, signal: AbortSignal): Promise<SearchResult[]> {
  const request = backendRequest(backend, query, limit);
  const combined = AbortSignal.any([signal, AbortSignal.timeout(SEARCH_TIMEOUT_MS)]);
  let response: Response;
  try {
    response = await fetch(request.url, { ...request.init, signal: combined, redirect: 'error' });
  } catch (error) {
    signal.throwIfAborted();
    const reason = combined.aborted ? `timed out after ${SEARCH_TIMEOUT_MS / 1000} s` : 'could not be reached';
    throw new Error(`the search engine (${backend.backend}) ${reason}`, { cause: error });
  }
  if (!response.ok) throw await backendError(response, backend.backend);
  let body: unknown;
  try {
    body = await response.json();
  } catch {
    throw new Error(`the search engine (${backend.backend}) answered with something that is not JSON`);
  }
  return normalizeResults(request.results(body), request.snippetField, limit);
}

/** web_search, or a tool marked unavailable (never offered) when no engine is configured. */
export function createWebSearchTool(backend: WebSearchConfig): Tool {
  return defineTool({
    name: 'web_search',
    toolset: 'web',
    description: 'Search the web. Returns title, url and snippet per result; read a result with web_extract.',
    guidance: '',
    schema: z.object({
      query: z.string().trim().min(1).max(500),
      limit: z.number().int().min(1).max(WEB_SEARCH_MAX_RESULTS).optional().describe(`Results (default ${WEB_SEARCH_DEFAULT_RESULTS})`),
    }),
    replaySafe: true,
    ...(backend === null ? { unavailable: 'no search engine is configured (HERALD_WEB_SEARCH)' } : {}),
    async execute(args, context) {
      if (backend === null) throw new Error('no search engine is configured');
      const results = await searchWeb(backend, args.query, args.limit ?? WEB_SEARCH_DEFAULT_RESULTS, context.signal);
      return JSON.stringify({ query: args.query, results });
    },
  });
}
