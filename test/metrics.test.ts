import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startFakeOpenAI } from './support/fake-llm.ts';
import type { FakeLLM } from './support/fake-llm.ts';
import { startFakeTelegram } from './support/fake-telegram.ts';
import type { FakeTelegram } from './support/fake-telegram.ts';
import { spawnHerald, startStack, waitFor } from './support/stack.ts';
import type { HeraldProcess, Stack } from './support/stack.ts';
import { metricValue } from './support/prometheus.ts';

const REVIEW = '[Background review]';

/** A role process with its metrics port (HERALD_METRICS_PORT=0 picks a free one; it logs which). */
async function startRole(role: string, env: Record<string, string>): Promise<{ process: HeraldProcess; url: string }> {
  const process = spawnHerald(role, { ...env, LOG_LEVEL: 'info', HERALD_METRICS_PORT: '0' });
  const port = await waitFor(async () => /metrics and health on port (\d+)/.exec(process.output())?.[1], { timeoutMs: 60_000, what: `${role} metrics port` });
  await waitFor(async () => process.output().includes(`${role} started`), { timeoutMs: 60_000, what: `${role} start` });
  return { process, url: `http://127.0.0.1:${port}` };
}

async function scrape(url: string): Promise<string> {
  const response = await fetch(`${url}/metrics`);
  expect(response.status).toBe(200);
  expect(response.headers.get('content-type')).toContain('text/plain');
  return response.text();
}

describe('/metrics on every role', () => {
  let llm: FakeLLM;
  let telegram: FakeTelegram;
  let stack: Stack;
  const roles: Record<string, { process: HeraldProcess; url: string }> = {};

  beforeAll(async () => {
    llm = await startFakeOpenAI({
      handler: (request) => {
        if (request.system.includes(REVIEW) || request.lastUserText.includes(REVIEW)) return { text: 'Nothing to save.' };
        const last = request.messages.at(-1);
        if (request.lastUserText === 'plan my day' && last?.role === 'user') {
          return { toolCalls: [{ name: 'todo', arguments: { todos: [{ id: '1', content: 'coffee', status: 'pending' }] } }] };
        }
        return { text: `done: ${request.lastUserText}` };
      },
    });
    telegram = await startFakeTelegram();
    const platform = {
      HERALD_MODEL: 'openai/gpt-test',
      OPENAI_BASE_URL: llm.url,
      OPENAI_API_KEY: 'sk-test',
      TELEGRAM_BOT_TOKEN: telegram.token,
      TELEGRAM_MODE: 'polling',
      TELEGRAM_ALLOWED_USERS: '*',
      TELEGRAM_API_ROOT: telegram.apiRoot,
      TELEGRAM_POLL_TIMEOUT_SECONDS: '1',
      HERALD_DELIVERY_POLL_MS: '100',
      HERALD_SCHEDULER_TICK_MS: '200',
    };
    stack = await startStack({ workers: 0, env: platform });
    for (const role of ['worker', 'reviewer', 'scheduler']) roles[role] = await startRole(role, stack.env);
  }, 180_000);

  afterAll(async () => {
    for (const role of Object.values(roles)) role.process.child.kill('SIGKILL');
    await stack?.stop();
    await telegram?.close();
    await llm?.close();
  });

  it('serves health and readiness on the roles without an API', async () => {
    for (const [role, { url }] of Object.entries(roles)) {
      expect((await fetch(`${url}/healthz`)).status, role).toBe(200);
      const ready = await fetch(`${url}/readyz`);
      expect(ready.status, role).toBe(200);
      expect(await ready.json(), role).toEqual({ status: 'ready', postgres: 'ok', redis: 'ok' });
      expect((await fetch(`${url}/nothing`)).status, role).toBe(404);
    }
  });

  it('moves the counters of a turn, its model and tool calls, delivery, review, cron run and search', async () => {
    expect((await stack.patch('/v1/profiles/main', { memory_review_interval: 1, skill_review_interval: 0 })).status).toBe(200);
    telegram.userMessage({ chatId: 71, from: { id: 71 }, text: 'plan my day' });
    await waitFor(async () => telegram.botMessages(71).length > 0, { timeoutMs: 60_000, what: 'the Telegram reply' });
    expect(telegram.botMessages(71)[0]!.text).toBe('done: plan my day');
    // Tracing is off here (no OTEL_EXPORTER_OTLP_ENDPOINT): nothing is carried on the outbox rows.
    const rows = await stack.database.db.selectFrom('outbox').select('trace_parent').execute();
    expect(rows.length).toBeGreaterThan(0);
    expect(rows.every((row) => row.trace_parent === null)).toBe(true);

    const job = (await stack.post('/v1/cron/jobs', { user_id: 'u1', prompt: 'tidy up', schedule: 'every 1h', deliver: 'local' })).body;
    expect((await stack.post(`/v1/cron/jobs/${job.job_id}/run`, {})).status).toBeLessThan(300);
    expect((await stack.get('/v1/search?q=coffee&user_id=71&platform=telegram')).status).toBeLessThan(500);

    const worker = await waitFor(
      async () => {
        const text = await scrape(roles.worker!.url);
        return (metricValue(text, 'herald_deliveries_total', { platform: 'telegram', outcome: 'delivered' }) ?? 0) >= 1 ? text : undefined;
      },
      { timeoutMs: 30_000, what: 'the worker delivery counter' },
    );
    expect(metricValue(worker, 'herald_turns_total', { outcome: 'answered' })).toBeGreaterThanOrEqual(1);
    // The turn's transcript, kept parsed for the session's next turn.
    expect(metricValue(worker, 'herald_transcript_cache_messages')).toBeGreaterThanOrEqual(1);
    expect(metricValue(worker, 'herald_turn_duration_seconds_count')).toBeGreaterThanOrEqual(1);
    expect(metricValue(worker, 'herald_model_calls_total', { provider: 'openai', model: 'gpt-test', outcome: 'ok' })).toBeGreaterThanOrEqual(2);
    expect(metricValue(worker, 'herald_model_tokens_total', { kind: 'input' })).toBeGreaterThan(0);
    expect(metricValue(worker, 'herald_model_tokens_total', { kind: 'output' })).toBeGreaterThan(0);
    expect(metricValue(worker, 'herald_tool_calls_total', { tool: 'todo', outcome: 'ok' })).toBe(1);
    expect(metricValue(worker, 'herald_lease_claims_total', { result: 'claimed' })).toBeGreaterThanOrEqual(1);
    expect(metricValue(worker, 'process_resident_memory_bytes')).toBeGreaterThan(0);

    const reviewer = await waitFor(
      async () => {
        const text = await scrape(roles.reviewer!.url);
        return (metricValue(text, 'herald_reviews_total', { outcome: 'done' }) ?? 0) >= 1 ? text : undefined;
      },
      { timeoutMs: 60_000, what: 'the review counter' },
    );
    expect(metricValue(reviewer, 'herald_model_calls_total', { outcome: 'ok' })).toBeGreaterThanOrEqual(1);

    const scheduler = await waitFor(
      async () => {
        const text = await scrape(roles.scheduler!.url);
        return (metricValue(text, 'herald_cron_fires_total', { outcome: 'succeeded' }) ?? 0) >= 1 ? text : undefined;
      },
      { timeoutMs: 60_000, what: 'the cron run counters' },
    );
    expect(metricValue(scheduler, 'herald_cron_fires_total', { outcome: 'fired' })).toBe(1);
    expect(metricValue(scheduler, 'herald_queue_jobs', { queue: 'runs', state: 'waiting' })).toBeGreaterThanOrEqual(0);

    // The ingress serves the same registry on its API port, without the token, like /healthz.
    const response = await fetch(`${stack.url}/metrics`);
    expect(response.status).toBe(200);
    const ingress = await response.text();
    expect(metricValue(ingress, 'herald_search_duration_seconds_count')).toBeGreaterThanOrEqual(1);
    expect(metricValue(ingress, 'herald_queue_jobs', { queue: 'inbox', state: 'waiting' })).toBe(0);
    expect(metricValue(ingress, 'herald_queue_oldest_waiting_seconds', { queue: 'runs' })).toBeGreaterThanOrEqual(0);
  });
});

describe('deploy/grafana/herald-dashboard.json', () => {
  it('charts only metrics that the roles export', async () => {
    const { registry } = await import('@herald/telemetry');
    const exported = new Set((await registry.getMetricsAsJSON()).map((metric) => metric.name));
    const dashboard = JSON.parse(readFileSync(new URL('../deploy/grafana/herald-dashboard.json', import.meta.url), 'utf8'));
    const used = new Set<string>();
    for (const panel of dashboard.panels) {
      for (const target of panel.targets) {
        for (const match of (target.expr as string).matchAll(/\b((?:herald|process|nodejs)_[a-z0-9_]+)/g)) used.add(match[1]!.replace(/_(bucket|count|sum)$/, ''));
      }
    }
    expect(used.size).toBeGreaterThan(15);
    for (const name of used) expect(exported.has(name), name).toBe(true);
    // Every Herald metric has a panel.
    for (const name of exported) if (name.startsWith('herald_')) expect(used.has(name), name).toBe(true);
  });
});
