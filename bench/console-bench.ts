import { mkdir, writeFile } from 'node:fs/promises';
import { sql } from 'kysely';
import { launchChromium } from '../test/support/browser.ts';
import { startStack, TEST_TOKEN } from '../test/support/stack.ts';
import type { Stack } from '../test/support/stack.ts';
import { percentile, table } from './machine.ts';

/** bench/results/console.json: one run's figures in a fixed shape, to compare runs. */
export const CONSOLE_RESULTS_FILE = new URL('./results/console.json', import.meta.url);

export const CONSOLE_MESSAGES = 10_000;
const RUNS = 5;
/** The console's transcript page size (services/ingress/console/src/pages/transcript.ts). */
const FIRST_PAGE = 100;

export interface ConsoleBenchResult {
  messages: number;
  runs: number;
  /** Navigation to the first page of messages in the DOM, each run, milliseconds. */
  openMs: number[];
  medianOpenMs: number;
  /** The first page's API call alone (GET /v1/sessions/:id/messages?limit=100), median of the runs. */
  medianPageApiMs: number;
  target: string;
  load: string;
}

/**
 * A session of `count` messages as a busy chat leaves it: user turns, assistant replies, and every
 * fifth turn a tool call with its result, each a few hundred characters.
 */
async function seedLongSession(stack: Stack, count: number): Promise<string> {
  const accepted = await stack.post('/v1/messages', { chat_id: 'bench-long-chat', user_id: 'bench', text: 'the start' });
  const sessionId = accepted.body.session_id as string;
  await sql`
    INSERT INTO messages (session_id, seq, role, content, tool_calls, tool_call_id, tool_name)
    SELECT ${sessionId}::uuid, n,
           CASE WHEN n % 4 = 1 THEN 'user' WHEN n % 20 = 3 THEN 'tool' ELSE 'assistant' END,
           CASE WHEN n % 20 = 2 THEN '' ELSE 'message ' || n || ': ' || repeat('the quarterly numbers look fine ', 8) END,
           CASE WHEN n % 20 = 2 THEN jsonb_build_array(jsonb_build_object('id', 'call-' || n, 'name', 'web_search', 'arguments', '{"query":"numbers"}')) END,
           CASE WHEN n % 20 = 3 THEN 'call-' || (n - 1) END,
           CASE WHEN n % 20 = 3 THEN 'web_search' END
      FROM generate_series(1, ${count}) AS n`.execute(stack.database.db);
  return sessionId;
}

async function timePageApi(stack: Stack, sessionId: string): Promise<number> {
  const started = performance.now();
  const response = await stack.get(`/v1/sessions/${sessionId}/messages?limit=${FIRST_PAGE}`);
  if (response.status !== 200) throw new Error(`transcript page: ${response.status}`);
  return performance.now() - started;
}

/**
 * Opens the session page in headless Chromium (signed in, the token in the tab's sessionStorage as
 * the console keeps it) and times navigation start to the newest message of the first page being
 * in the DOM. One untimed open first, so the runs measure a warm server, as an operator sees it.
 */
export async function runConsoleBench(progress: (message: string) => void, load: () => string): Promise<ConsoleBenchResult> {
  const stack = await startStack({ workers: 0 });
  const browser = await launchChromium();
  try {
    progress(`console: seeding a ${CONSOLE_MESSAGES.toLocaleString('en')}-message session`);
    const sessionId = await seedLongSession(stack, CONSOLE_MESSAGES);
    const page = await (await browser.newContext({ viewport: { width: 1280, height: 800 } })).newPage();
    page.setDefaultTimeout(60_000);
    await page.goto(`${stack.url}/ui/`);
    await page.locator('#token').fill(TEST_TOKEN);
    await page.keyboard.press('Enter');
    await page.locator('#nav').waitFor();
    const lastMessage = `ol.transcript li[data-seq="${CONSOLE_MESSAGES}"]`;
    const open = async () => {
      await page.goto('about:blank');
      const started = performance.now();
      await page.goto(`${stack.url}/ui/#/session/${sessionId}`);
      await page.locator(lastMessage).waitFor({ state: 'attached' });
      const elapsed = performance.now() - started;
      const rendered = await page.locator('ol.transcript > li').count();
      if (rendered !== FIRST_PAGE) throw new Error(`expected the first page of ${FIRST_PAGE} messages, found ${rendered}`);
      return elapsed;
    };
    await open();
    const openMs: number[] = [];
    const apiMs: number[] = [];
    for (let run = 1; run <= RUNS; run++) {
      progress(`console: opening the transcript, run ${run} of ${RUNS}`);
      openMs.push(await open());
      apiMs.push(await timePageApi(stack, sessionId));
    }
    return { messages: CONSOLE_MESSAGES, runs: RUNS, openMs, medianOpenMs: percentile(openMs, 50), medianPageApiMs: percentile(apiMs, 50), target: 'under 1000 ms', load: load() };
  } finally {
    await browser.close();
    await stack.stop();
  }
}

export function printConsoleBench(result: ConsoleBenchResult): void {
  const fmt = (n: number) => n.toFixed(0);
  console.log(`\n## Console: opening a ${result.messages.toLocaleString('en')}-message session\n`);
  console.log(
    'Headless Chromium (playwright-core, Debian chromium) opens the session page of the console, signed in; timed from ' +
      `navigation to the newest message of the first page (${FIRST_PAGE} messages) in the DOM, median of ${result.runs} runs after one untimed open (bench/console-bench.ts). ` +
      `Target: ${result.target}. Load: ${result.load}.\n`,
  );
  console.log(
    table(
      ['messages', 'runs', 'median open ms', 'min ms', 'max ms', 'first page API median ms'],
      [[result.messages, result.runs, fmt(result.medianOpenMs), fmt(Math.min(...result.openMs)), fmt(Math.max(...result.openMs)), fmt(result.medianPageApiMs)]],
    ),
  );
}

export async function writeConsoleJson(result: ConsoleBenchResult, machine: string): Promise<void> {
  const json = {
    machine,
    load: result.load,
    messages: result.messages,
    runs: result.runs,
    open_ms: result.openMs.map((ms) => Math.round(ms)),
    median_open_ms: Math.round(result.medianOpenMs),
    median_page_api_ms: Math.round(result.medianPageApiMs),
    target_ms: 1000,
    under_target: result.medianOpenMs < 1000,
  };
  await mkdir(new URL('./', CONSOLE_RESULTS_FILE), { recursive: true });
  await writeFile(CONSOLE_RESULTS_FILE, `${JSON.stringify(json, null, 2)}\n`);
}
