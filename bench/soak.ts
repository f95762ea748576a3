// The soak (issue 37): mixed traffic against separate role processes of the compiled bundle for N
// minutes, sampling each role's RSS, heap and open handles every 30 s, and the turns' latency per
// 5 minutes; writes bench/results/soak.json. Target for 30 minutes (TARGETS.md): after a 5-minute
// warm-up, RSS growth under 1 MB per 10 minutes per role, handles flat, p99 of the last 5 minutes
// within 1.2x the first, nothing lost or doubled.
// Run: npm run soak -- --minutes N [--sample-seconds S]
import { mkdirSync, writeFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { loadavg } from 'node:os';
import { sql } from 'kysely';
import { isSummaryRequest, startFakeOpenAI } from '../test/support/fake-llm.ts';
import type { FakeRequest } from '../test/support/fake-llm.ts';
import { startFakeTelegram } from '../test/support/fake-telegram.ts';
import { createTestDatabase, uniquePrefix } from '../test/support/test-database.ts';
import { HERALD_BUILT_BIN, PROCESS_START_MS, spawnHerald, stopProcess, TEST_TOKEN, waitFor } from '../test/support/stack.ts';
import type { HeraldProcess } from '../test/support/stack.ts';
import { statementCounters, statementTrends, trackStatements } from './soak-statements.ts';
import { manifestMemoryLimit, PodMemory } from './pod-memory.ts';

const WINDOW_MS = 5 * 60_000;
/**
 * An API client starts its chats anew (`/new`, as people do) every this many of its turns, the four
 * clients a quarter apart: the chats' ages are then a steady mix after the first cycle (about 2.5
 * minutes), inside the warm-up. Chats that all start empty together and only lengthen are not a
 * steady load: every turn sends and reads more than the one before, and the run measures that
 * ramp, not Herald over time (the runs of 2026-12-06 saw the p50 go 145 -> 385 ms while the chats
 * grew to about a thousand messages each). A long session's per-turn cost is issue 41's bench; the
 * long chat below is still compressed again and again.
 */
const ROTATE_EVERY = 240;
/** The Telegram chat's person starts anew every this many messages (about 3.5 minutes). */
const TELEGRAM_ROTATE_EVERY = 100;

function option(name: string, fallback: number): number {
  const index = process.argv.indexOf(`--${name}`);
  const value = index >= 0 ? Number(process.argv[index + 1]) : fallback;
  if (!Number.isFinite(value) || value <= 0) throw new Error(`--${name} takes a positive number`);
  return value;
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const percentile = (values: number[], p: number) => {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted.length === 0 ? null : sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
};

/** The fake model: what it answers depends on the person's message (see the traffic below). */
function modelHandler(request: FakeRequest) {
  // A summary as a summariser writes one: short. Echoing the summary prompt made every compression
  // of the long chat as long as what it summarised, so after two the session stopped compressing
  // (anti-thrash) and grew for the whole run: the runs before 2026-12-06 19:30 measured that ramp.
  if (isSummaryRequest(request)) return { text: `## Goal\nCarry on with the soak.\n## Progress\n- ${request.lastUserText.length} characters summarised` };
  const last = request.messages.at(-1);
  const text = request.lastUserText;
  if (last?.role === 'tool') return { text: `done: ${text.slice(0, 40)}` };
  if (text.startsWith('tool ')) return { toolCalls: [{ name: 'todo', arguments: { todos: [{ id: '1', content: text, status: 'pending' }] } }] };
  if (text.startsWith('approve ')) return { toolCalls: [{ name: 'terminal', arguments: { command: 'touch soak.txt && chmod 777 soak.txt && echo opened' } }] };
  if (text.startsWith('delegate ')) return { toolCalls: [{ name: 'delegate_task', arguments: { goal: `child: ${text}` } }] };
  return { text: `echo: ${text}` };
}

interface Role {
  name: string;
  process: HeraldProcess;
  /** Where its /metrics answers. */
  metricsUrl: string;
}

async function startRole(role: string, env: Record<string, string>, pods: PodMemory): Promise<Role> {
  const launcher = await pods.launcher(manifestMemoryLimit(role));
  // The output's tail is enough to find the start line; half an hour of logs is not kept.
  const child = spawnHerald(role, { ...env, LOG_LEVEL: 'info' }, HERALD_BUILT_BIN, [], 1_000_000, launcher);
  const ready = role === 'ingress' ? /ingress listening on (\S+)"/ : /metrics and health on port (\d+)/;
  const found = await waitFor(async () => ready.exec(child.output())?.[1], { timeoutMs: PROCESS_START_MS, what: `${role} start` });
  const metricsUrl = role === 'ingress' ? `${found.replace('0.0.0.0', '127.0.0.1')}/metrics` : `http://127.0.0.1:${found}/metrics`;
  return { name: role, process: child, metricsUrl };
}

function metric(text: string, name: string, label?: string): number | null {
  const labels = label === undefined ? '(?:\\{[^}]*\\})?' : `\\{[^}]*${label}[^}]*\\}`;
  const match = new RegExp(`^${name}${labels} ([0-9.e+]+)$`, 'm').exec(text);
  return match ? Number(match[1]) : null;
}

/** Least-squares slope of (minute, value), in units per 10 minutes. */
function slopePer10Minutes(points: [number, number][]): number | null {
  if (points.length < 2) return null;
  const mx = points.reduce((sum, [x]) => sum + x, 0) / points.length;
  const my = points.reduce((sum, [, y]) => sum + y, 0) / points.length;
  const sxx = points.reduce((sum, [x]) => sum + (x - mx) ** 2, 0);
  return sxx === 0 ? null : (10 * points.reduce((sum, [x, y]) => sum + (x - mx) * (y - my), 0)) / sxx;
}

/**
 * The trend of the RSS a role comes back down to: the lowest sample of each 5-minute window after
 * the warm-up, against the window's middle. A role whose major collections come minutes apart has
 * a sawtooth of tens of MB, and a line through all samples of 25 minutes then says more about where
 * the last tooth ends than about growth; a leak raises the floor.
 */
function floorSlope(warm: Record<string, any>[], name: string): number | null {
  const floors = new Map<number, number>();
  for (const sample of warm) {
    const window = Math.floor(sample.atMs / WINDOW_MS);
    floors.set(window, Math.min(floors.get(window) ?? Infinity, sample[name].rssMb));
  }
  return slopePer10Minutes([...floors].map(([window, rss]) => [(window + 0.5) * (WINDOW_MS / 60_000), rss]));
}

/**
 * The targets read off the samples: per role, after the 5-minute warm-up, the RSS and heap trend
 * (least squares, so one sample caught mid-GC does not decide it) and the handles at the warm-up's
 * end and at the last sample; the p99 of the last window against the first after the warm-up.
 */
function verdict(samples: Record<string, any>[], roleNames: string[], windows: { p99Ms: number | null }[]) {
  const warm = samples.filter((sample) => sample.atMs >= WINDOW_MS);
  const roles = Object.fromEntries(
    roleNames.map((name) => {
      const series = (field: string) => warm.map((sample) => [sample.atMs / 60_000, sample[name][field]] as [number, number]);
      const rss = slopePer10Minutes(series('rssMb'));
      return [
        name,
        {
          rssMbPer10Min: rss,
          rssFloorMbPer10Min: floorSlope(warm, name),
          heapMbPer10Min: slopePer10Minutes(series('heapUsedMb')),
          handlesAfterWarmUp: warm[0]?.[name].activeHandles ?? null,
          handlesLast: warm.at(-1)?.[name].activeHandles ?? null,
          rssUnder1Mb: rss !== null && rss < 1,
        },
      ];
    }),
  );
  // The first 5 minutes after the warm-up, as for the RSS: the warm-up's own window (chats, caches
  // and the JIT still filling) is reported beside it.
  const first = windows[1]?.p99Ms ?? null;
  const warmUp = windows[0]?.p99Ms ?? null;
  const last = windows.at(-1)?.p99Ms ?? null;
  const driverHeap = slopePer10Minutes(warm.map((sample) => [sample.atMs / 60_000, sample.driver.heapUsedMb] as [number, number]));
  return { roles, p99LastOverFirst: first && last ? last / first : null, p99LastOverWarmUp: warmUp && last ? last / warmUp : null, driverHeapMbPer10Min: driverHeap };
}

/** One sample of a role: RSS and open file descriptors from /proc, heap and active handles from its /metrics. */
async function sampleRole(role: Role) {
  const pid = role.process.child.pid!;
  const status = await readFile(`/proc/${pid}/status`, 'utf8');
  const fds = (await readdir(`/proc/${pid}/fd`)).length;
  const metrics = await fetch(role.metricsUrl)
    .then((response) => response.text())
    .catch(() => '');
  return {
    rssMb: Number(/VmRSS:\s+(\d+)/.exec(status)?.[1] ?? 0) / 1024,
    heapUsedMb: (metric(metrics, 'nodejs_heap_size_used_bytes') ?? NaN) / 1024 / 1024,
    // What V8 has reserved, and its young generation's share: RSS follows these, live or garbage.
    heapTotalMb: (metric(metrics, 'nodejs_heap_size_total_bytes') ?? NaN) / 1024 / 1024,
    newSpaceMb: (metric(metrics, 'nodejs_heap_space_size_total_bytes', 'space="new"') ?? NaN) / 1024 / 1024,
    activeHandles: metric(metrics, 'nodejs_active_handles_total'),
    // A worker's transcript cache (null for the other roles): full by the warm-up's end, or growing.
    transcriptCacheMessages: metric(metrics, 'herald_transcript_cache_messages'),
    openFds: fds,
  };
}

async function main(): Promise<void> {
  const minutes = option('minutes', 30);
  const sampleMs = option('sample-seconds', 30) * 1000;
  // --heap-snapshots DIR: each role writes a heap snapshot there at the warm-up's end and at the
  // run's end (SIGUSR2), to compare what the live heap holds more of.
  const snapshotIndex = process.argv.indexOf('--heap-snapshots');
  const snapshotDir = snapshotIndex >= 0 ? process.argv[snapshotIndex + 1] : undefined;
  if (snapshotDir !== undefined) mkdirSync(snapshotDir, { recursive: true });
  const model = await startFakeOpenAI({ handler: modelHandler, latencyMs: 50, retainRequests: 20 });
  const telegram = await startFakeTelegram();
  const database = await createTestDatabase();
  const tracking = await trackStatements(database.db, database.name);
  const env: Record<string, string> = {
    DATABASE_URL: database.url,
    REDIS_URL: 'redis://127.0.0.1:6379',
    PORT: '0',
    HERALD_METRICS_PORT: '0',
    HERALD_API_TOKEN: TEST_TOKEN,
    HERALD_QUEUE_PREFIX: uniquePrefix(),
    HERALD_DB_POOL_SIZE: '6',
    HERALD_WORKSPACE_ROOT: join('/tmp', `herald-soak-${database.name}`),
    HERALD_MODEL: 'openai/gpt-test',
    OPENAI_BASE_URL: model.url,
    OPENAI_API_KEY: 'sk-test',
    // A small window, so the long chat is compressed into child sessions every few minutes.
    HERALD_CONTEXT_TOKENS: '16000',
    TELEGRAM_BOT_TOKEN: telegram.token,
    TELEGRAM_MODE: 'polling',
    TELEGRAM_ALLOWED_USERS: '*',
    TELEGRAM_API_ROOT: telegram.apiRoot,
    TELEGRAM_POLL_TIMEOUT_SECONDS: '1',
    HERALD_DELIVERY_POLL_MS: '200',
    // The workers' transcript cache is bounded memory by design (50,000 messages by default, more
    // than this run writes): a bound that holds the chats in use (under 400 messages each at their
    // longest, see ROTATE_EVERY) and fills within the warm-up, so what grows after it is a leak.
    HERALD_TRANSCRIPT_CACHE_MESSAGES: '5000',
    // And by weight: the long chat's padded messages move the cache's bytes with the chats' mix (the
    // heap snapshots of 2026-12-06); 2 MB holds the chats in use and binds before the count does.
    HERALD_TRANSCRIPT_CACHE_MB: '2',
    ...(snapshotDir === undefined ? {} : { NODE_OPTIONS: `--heapsnapshot-signal=SIGUSR2 --diagnostic-dir=${snapshotDir}` }),
  };
  // Each role with its pod's memory (deploy/k8s/base), so V8 sizes its heap as it does in the cluster.
  const pods = await PodMemory.open();
  const roleNames = ['ingress', 'worker', 'worker', 'scheduler', 'reviewer'];
  const roles: Role[] = [];
  for (const name of roleNames) roles.push(await startRole(name, env, pods));
  const api = roles[0]!.metricsUrl.replace(/\/metrics$/, '');
  const call = async (method: string, path: string, body?: unknown) => {
    const response = await fetch(`${api}${path}`, {
      method,
      headers: { authorization: `Bearer ${TEST_TOKEN}`, ...(body === undefined ? {} : { 'content-type': 'application/json' }) },
      body: body === undefined ? undefined : JSON.stringify(body),
      signal: AbortSignal.timeout(60_000),
    });
    return { status: response.status, body: (await response.json().catch(() => ({}))) as any };
  };
  const cron = await call('POST', '/v1/cron/jobs', { user_id: 'soak', prompt: 'cron tick', schedule: 'every 1m', name: 'soak-tick' });
  if (cron.status !== 201) throw new Error(`cron job refused: ${JSON.stringify(cron.body)}`);

  // A soak on a busy machine measures the machine: the one-minute load average goes in the result.
  const loadAtStart = loadavg()[0];
  const started = Date.now();
  const ends = started + minutes * 60_000;
  const turns: { at: number; ms: number; ok: boolean; kind: string; status: number }[] = [];
  const samples: Record<string, unknown>[] = [];
  let sent = 0;
  let telegramSent = 0;
  let telegramNews = 0;

  /** One turn through the API, timed from the request to the stored reply; approvals answered. */
  const turn = async (chat: string, text: string) => {
    const at = Date.now();
    sent += 1;
    let result = await call('POST', '/v1/messages?wait=30', { chat_id: chat, user_id: 'soak', text, idempotency_key: `${chat}-${sent}` }).catch(() => ({ status: 0, body: {} }));
    if (result.body?.waiting?.kind === 'approval') await call('POST', `/v1/waits/${result.body.waiting.id}`, { decision: 'approve', user_id: 'soak' });
    // Parked on an approval or on its subagents: the answer comes later, and counts from the send.
    if (result.status === 202 && result.body?.event_id) {
      result = await waitFor(
        async () => {
          const event = await call('GET', `/v1/events/${result.body.event_id}`);
          return event.body?.status === 'done' ? event : undefined;
        },
        { timeoutMs: 60_000, what: 'the approved turn' },
      ).catch(() => ({ status: 0, body: {} }));
    }
    const kind = text.split(' ')[0]!;
    turns.push({ at: at - started, ms: Date.now() - at, ok: result.status === 200 && typeof result.body?.reply?.text === 'string', kind, status: result.status });
  };
  let newSessions = 0;
  /** `/new` in a chat: answered at once by the ingress, not a turn, so not timed with them. */
  const startAnew = async (chat: string) => {
    const result = await call('POST', '/v1/messages', { chat_id: chat, user_id: 'soak', text: '/new', idempotency_key: `${chat}-new-${sent}` }).catch(() => ({ status: 0, body: {} }));
    if (result.status === 200 || result.status === 202) newSessions += 1;
  };
  const kinds = ['chat', 'tool', 'chat', 'approve', 'delegate', 'chat'];
  const client = async (index: number) => {
    const offset = (index * ROTATE_EVERY) / 4;
    for (let n = 0; Date.now() < ends; n++) {
      if (n > 0 && (n + offset) % ROTATE_EVERY === 0) for (const chat of ['a', 'c']) await startAnew(`soak-${index}-${chat}`);
      const kind = kinds[(index + n) % kinds.length]!;
      await turn(`soak-${index}-${kind === 'approve' ? 'a' : 'c'}`, `${kind} ${index}-${n}`);
      await sleep(500);
    }
  };
  const longChat = async () => {
    // Padded messages: the session passes the window's threshold and is compressed, again and again.
    for (let n = 0; Date.now() < ends; n++) {
      await turn('soak-long', `chat long-${n} ${'lorem ipsum dolor sit amet '.repeat(60)}`);
      await sleep(1000);
    }
  };
  const telegramChat = async () => {
    for (; Date.now() < ends; telegramSent++) {
      if (telegramSent > 0 && telegramSent % TELEGRAM_ROTATE_EVERY === 0) {
        telegram.userMessage({ chatId: 4242, from: { id: 4242 }, text: '/new' });
        telegramNews += 1;
        await sleep(500);
      }
      telegram.userMessage({ chatId: 4242, from: { id: 4242 }, text: `chat telegram-${telegramSent}` });
      await sleep(2000);
    }
  };
  const sampler = async () => {
    for (;;) {
      const row: Record<string, unknown> = { atMs: Date.now() - started };
      for (const [index, role] of roles.entries()) row[`${role.name}-${index}`] = await sampleRole(role);
      // The driver's own memory: a driver that grows slows down and measures itself.
      const own = process.memoryUsage();
      row.driver = { rssMb: own.rss / 1024 / 1024, heapUsedMb: own.heapUsed / 1024 / 1024 };
      samples.push(row);
      if (Date.now() + sampleMs > ends) return;
      await sleep(sampleMs);
    }
  };
  // pg_stat_statements' counters at the start and the end of every window.
  const counters = tracking ? [await statementCounters(database.db)] : [];
  const statements = async () => {
    for (let index = 1; tracking; index++) {
      await sleep(Math.max(0, Math.min(started + index * WINDOW_MS, ends) - Date.now()));
      counters.push(await statementCounters(database.db));
      if (started + index * WINDOW_MS >= ends) return;
    }
  };
  const snapshot = () => {
    for (const role of roles) role.process.child.kill('SIGUSR2');
  };
  const snapshots = async () => {
    if (snapshotDir === undefined) return;
    await sleep(WINDOW_MS);
    snapshot();
    await sleep(Math.max(0, ends - Date.now() - 20_000));
    snapshot();
  };
  await Promise.all([...Array.from({ length: 4 }, (_, index) => client(index)), longChat(), telegramChat(), sampler(), statements(), snapshots()]);

  // Drain: everything accepted is answered before counting.
  const db = database.db;
  await waitFor(
    async () => {
      const open = await sql<{ n: string }>`SELECT count(*) AS n FROM inbound_events WHERE status IN ('pending', 'processing')`.execute(db);
      return Number(open.rows[0]?.n) === 0;
    },
    { timeoutMs: 120_000, what: 'the backlog drained' },
  ).catch(() => undefined);
  // A reply per message, and one per `/new` (the command's own answer).
  await waitFor(async () => telegram.botMessages(4242).length >= telegramSent + telegramNews || undefined, { timeoutMs: 30_000, what: 'telegram answers' }).catch(() => undefined);
  const lost = await sql<{ n: string }>`SELECT count(*) AS n FROM inbound_events WHERE status <> 'done'`.execute(db);
  const doubled = await sql<{ n: string }>`
    SELECT count(*) - count(DISTINCT (session_id, content)) AS n FROM messages WHERE role = 'assistant' AND content LIKE 'echo: %'`.execute(db);
  const counts = await sql<{ compressions: string; long_chat_compressions: string; cron_runs: string; subagents: string; approvals: string }>`
    SELECT (SELECT count(*) FROM session_compressions) AS compressions, (SELECT count(*) FROM cron_runs) AS cron_runs,
           (SELECT count(*) FROM session_compressions c JOIN sessions s ON s.id = c.session_id
             WHERE s.chat_id = 'soak-long' AND c.status = 'done') AS long_chat_compressions,
           (SELECT count(*) FROM subagent_runs) AS subagents, (SELECT count(*) FROM tool_waits) AS approvals`.execute(db);
  const telegramAnswers = telegram.botMessages(4242).length - telegramNews;
  // How long the sessions got: the steady mix the rotation keeps (ended sessions included).
  const lengths = await sql<{ sessions: string; p50: number | null; max: number | null }>`
    SELECT count(*) AS sessions, percentile_disc(0.5) WITHIN GROUP (ORDER BY n) AS p50, max(n) AS max
    FROM (SELECT count(*) AS n FROM messages GROUP BY session_id) per_session`.execute(db);

  const windows = Array.from({ length: Math.ceil((minutes * 60_000) / WINDOW_MS) }, (_, index) => {
    const inWindow = turns.filter((t) => t.at >= index * WINDOW_MS && t.at < (index + 1) * WINDOW_MS);
    const ms = inWindow.filter((t) => t.ok).map((t) => t.ms);
    return { fromMinute: index * 5, turns: inWindow.length, errors: inWindow.filter((t) => !t.ok).length, p50Ms: percentile(ms, 50), p99Ms: percentile(ms, 99) };
  });
  const result = {
    when: new Date().toISOString(),
    loadAverage: { atStart: loadAtStart, atEnd: loadavg()[0] },
    verdict: verdict(
      samples,
      roles.map((role, index) => `${role.name}-${index}`),
      windows,
    ),
    minutes,
    sampleSeconds: sampleMs / 1000,
    podMemory: { method: pods.method, limitMb: Object.fromEntries(roleNames.map((name) => [name, manifestMemoryLimit(name) / 2 ** 20])) },
    roles: roles.map((role, index) => `${role.name}-${index}`),
    samples,
    windows,
    // Per window, the mean time and pages per call of the 16 statements that took the most time.
    statements: tracking ? statementTrends(counters) : null,
    totals: {
      turns: turns.length,
      errors: turns.filter((t) => !t.ok).length,
      errorsByKind: Object.fromEntries(kinds.map((kind) => [kind, turns.filter((t) => !t.ok && t.kind === kind).map((t) => t.status)])),
      telegramSent,
      telegramAnswers,
      newSessions: newSessions + telegramNews,
      sessions: Number(lengths.rows[0]?.sessions),
      messagesPerSession: { p50: Number(lengths.rows[0]?.p50 ?? NaN), max: Number(lengths.rows[0]?.max ?? NaN) },
      compressions: Number(counts.rows[0]?.compressions),
      // The long chat's own: it must go on being compressed for the whole run, not stop after a few.
      longChatCompressions: Number(counts.rows[0]?.long_chat_compressions),
      cronRuns: Number(counts.rows[0]?.cron_runs),
      subagentRuns: Number(counts.rows[0]?.subagents),
      approvals: Number(counts.rows[0]?.approvals),
    },
    lost: Number(lost.rows[0]?.n) + Math.max(0, telegramSent - telegramAnswers),
    doubled: Number(doubled.rows[0]?.n) + Math.max(0, telegramAnswers - telegramSent),
  };
  mkdirSync(new URL('./results/', import.meta.url), { recursive: true });
  writeFileSync(new URL('./results/soak.json', import.meta.url), `${JSON.stringify(result, null, 2)}\n`);
  process.stdout.write(`${JSON.stringify({ loadAverage: result.loadAverage, verdict: result.verdict, windows, totals: result.totals, lost: result.lost, doubled: result.doubled }, null, 2)}\n`);

  for (const role of roles) await stopProcess(role.process, 'SIGTERM');
  await pods.close();
  await database.drop();
  await telegram.close();
  await model.close();
}

main().catch((error: unknown) => {
  process.stderr.write(`soak: ${(error as Error).stack ?? String(error)}\n`);
  process.exit(1);
});
