import type { z } from 'zod';
import { oneOf, optionalText, url } from './fields.ts';

/** Which search engine web_search asks; null: none configured, and the tool is not offered. */
export type WebSearchConfig = { backend: 'searxng'; url: string } | { backend: 'brave'; url: string; apiKey: string } | { backend: 'tavily'; url: string; apiKey: string } | null;

const httpUrl = url(/^https?:$/, 'https://search.example.com');

export const webSearchSchema = {
  HERALD_WEB_SEARCH: oneOf(['searxng', 'brave', 'tavily']).optional(),
  SEARXNG_URL: httpUrl.optional(),
  BRAVE_API_KEY: optionalText,
  BRAVE_API_URL: httpUrl.default('https://api.search.brave.com/res/v1/web/search'),
  TAVILY_API_KEY: optionalText,
  TAVILY_API_URL: httpUrl.default('https://api.tavily.com'),
};

type WebSearchEnv = { [K in keyof typeof webSearchSchema]?: z.output<(typeof webSearchSchema)[K]> };

/** The variable the chosen backend cannot work without, when it is missing. */
export function missingWebSearchSetting(e: WebSearchEnv): string | null {
  if (e.HERALD_WEB_SEARCH === 'searxng' && e.SEARXNG_URL === undefined) return 'SEARXNG_URL';
  if (e.HERALD_WEB_SEARCH === 'brave' && e.BRAVE_API_KEY === undefined) return 'BRAVE_API_KEY';
  if (e.HERALD_WEB_SEARCH === 'tavily' && e.TAVILY_API_KEY === undefined) return 'TAVILY_API_KEY';
  return null;
}

export function webSearchConfig(e: WebSearchEnv): WebSearchConfig {
  const trim = (value: string) => value.replace(/\/+$/, '');
  switch (e.HERALD_WEB_SEARCH) {
    case 'searxng':
      return e.SEARXNG_URL === undefined ? null : { backend: 'searxng', url: trim(e.SEARXNG_URL) };
    case 'brave':
      return e.BRAVE_API_KEY === undefined || e.BRAVE_API_URL === undefined ? null : { backend: 'brave', url: e.BRAVE_API_URL, apiKey: e.BRAVE_API_KEY };
    case 'tavily':
      return e.TAVILY_API_KEY === undefined || e.TAVILY_API_URL === undefined ? null : { backend: 'tavily', url: trim(e.TAVILY_API_URL), apiKey: e.TAVILY_API_KEY };
    default:
      return null;
  }
}
