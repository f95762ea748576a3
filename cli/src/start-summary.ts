import type { Config } from '@herald/core';
import { CHAT_PLATFORMS } from '@herald/core';

/** The console's path on the API (services/ingress console-routes.ts). */
const CONSOLE_PATH = '/ui/';

function tokenHint(config: Config): string {
  return config.api.token === undefined ? 'open, loopback only: no HERALD_API_TOKEN set' : 'needs HERALD_API_TOKEN (from .env or your environment) as a bearer token; the console asks for it once';
}

/**
 * What `herald up` says to a person at a terminal once it is up: the mode and why, where the data
 * is, where to talk to it and with what token, the model and the platforms. Plain lines, no JSON.
 */
export function startSummary(config: Config, modeLine: string, address: string): string {
  const base = address.replace('0.0.0.0', '127.0.0.1').replace('[::]', '[::1]');
  const platforms = CHAT_PLATFORMS.filter((platform) => config.platforms.accounts[platform].length > 0);
  const model = config.model.endpoint;
  const rows: [string, string][] = [
    ['mode', modeLine.replace(/^mode: /, '')],
    ['data', config.database.mode === 'embedded' ? `${config.database.dataDir} (embedded Postgres)` : 'in your Postgres (DATABASE_URL)'],
    ['API', `${base}  (${tokenHint(config)})`],
    ['console', `${base}${CONSOLE_PATH}`],
    ['model', model === null ? 'none: set HERALD_MODEL (or run `npx herald init`); messages get a note on how' : `${model.provider}/${model.model}${model.baseURL ? ` at ${model.baseURL}` : ''}`],
    ['platforms', platforms.length > 0 ? platforms.join(', ') : 'none (the API, `herald chat` and the console)'],
    ['chat', 'npx herald chat, or the console in a browser'],
  ];
  return `Herald is up.\n${rows.map(([name, value]) => `  ${`${name}:`.padEnd(11)}${value}`).join('\n')}\n`;
}
