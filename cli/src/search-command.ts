import { userInfo } from 'node:os';
import { parseArgs } from 'node:util';
import { API_PLATFORM, CHAT_PLATFORMS } from '@herald/core';
import type { Config } from '@herald/core';

export const SEARCH_USAGE = `herald search QUERY [options]      search past conversations through the API (GET /v1/search)
  --user ID        whose history (default: your login name, as herald chat uses)
  --profile P      profile (default main)
  --role R         user, assistant, tool (comma-separated)
  --platform P     ${[API_PLATFORM, ...CHAT_PLATFORMS].join(', ')}... (comma-separated)
  --session ID     only this session
  --from DATE      from this date (ISO, inclusive)
  --to DATE        until this date (ISO, exclusive)
  --sort S         relevance (default), newest or oldest
  --limit N        sessions to show (default 5, at most 50)
  --json           print the API's JSON answer
QUERY syntax: words (English stemming, prefixes), "quoted phrase", a OR b, -exclude; CJK by substring.`;

interface SearchAnswer {
  route?: string;
  matched?: number;
  sessions?: {
    session_id: string;
    platform: string;
    chat_type: string;
    started_at: string;
    hits: { message_id: string; role: string; created_at: string; snippet: string; tool_name?: string }[];
  }[];
  error?: { message: string };
}

function highlight(snippet: string, tty: boolean): string {
  return tty ? snippet.replaceAll('>>>', '\x1b[1m').replaceAll('<<<', '\x1b[22m') : snippet;
}

function parseSearchArgs(argv: string[]) {
  return parseArgs({
    args: argv,
    options: {
      user: { type: 'string' },
      profile: { type: 'string' },
      role: { type: 'string' },
      platform: { type: 'string' },
      session: { type: 'string' },
      from: { type: 'string' },
      to: { type: 'string' },
      sort: { type: 'string' },
      limit: { type: 'string' },
      json: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    allowPositionals: true,
  });
}

/** The query string of GET /v1/search: the query, whose history, and the filters given. */
function searchParams(query: string, values: ReturnType<typeof parseSearchArgs>['values']): URLSearchParams {
  const params = new URLSearchParams({ q: query, user_id: values.user ?? userInfo().username });
  const optional: [string, string | undefined][] = [
    ['profile', values.profile],
    ['role', values.role],
    ['platform', values.platform],
    ['session_id', values.session],
    ['from', values.from],
    ['to', values.to],
    ['sort', values.sort],
    ['limit', values.limit],
  ];
  for (const [key, value] of optional) if (value !== undefined) params.set(key, value);
  return params;
}

/** The answer as lines: each session, its hits with their snippets, and a closing count. */
function answerLines(body: SearchAnswer, tty: boolean): string[] {
  const sessions = body.sessions ?? [];
  const lines: string[] = [];
  for (const session of sessions) {
    lines.push(`session ${session.session_id}  ${session.platform}/${session.chat_type}  started ${session.started_at.slice(0, 16).replace('T', ' ')}`);
    for (const hit of session.hits) {
      const who = hit.tool_name === undefined ? hit.role : `${hit.role} (${hit.tool_name})`;
      lines.push(`  ${hit.created_at.slice(0, 16).replace('T', ' ')}  #${hit.message_id}  ${who}: ${highlight(hit.snippet, tty)}`);
    }
  }
  lines.push(`${sessions.length} session(s); ${body.matched ?? 0} matching message(s) considered (${body.route ?? '?'})`);
  return lines;
}

/** `herald search`: people's view of history search, through the same API and scope as everyone. */
export async function runSearch(argv: string[], config: Config): Promise<void> {
  const { values, positionals } = parseSearchArgs(argv);
  if (values.help) {
    process.stdout.write(`${SEARCH_USAGE}\n`);
    return;
  }
  const query = positionals.join(' ');
  if (query.trim() === '') {
    process.stderr.write(`herald: search needs a query\n\n${SEARCH_USAGE}\n`);
    process.exitCode = 2;
    return;
  }
  const response = await fetch(`${config.api.url}/v1/search?${searchParams(query, values).toString()}`, {
    headers: config.api.token === undefined ? {} : { authorization: `Bearer ${config.api.token}` },
  });
  const body = (await response.json()) as SearchAnswer;
  if (!response.ok) {
    process.stderr.write(`herald: search failed (${response.status}): ${body.error?.message ?? 'unexpected answer'}\n`);
    process.exitCode = 1;
    return;
  }
  if (values.json) {
    process.stdout.write(`${JSON.stringify(body, null, 2)}\n`);
    return;
  }
  if ((body.sessions ?? []).length === 0) {
    process.stdout.write(`no matches for ${JSON.stringify(query)}\n`);
    return;
  }
  process.stdout.write(`${answerLines(body, process.stdout.isTTY === true).join('\n')}\n`);
}
