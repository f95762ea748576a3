import { createHash } from 'node:crypto';
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { sql } from 'kysely';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { pruneAudit } from '@herald/audit';
import { AUDIT_MIN_RETENTION_DAYS, loadConfig } from '@herald/core';
import { startFakeOpenAI } from './support/fake-llm.ts';
import type { FakeLLM, FakeReply, FakeRequest } from './support/fake-llm.ts';
import { HERALD_BIN, PROCESS_START_MS, startStack, TEST_TOKEN } from './support/stack.ts';
import type { Stack } from './support/stack.ts';
import { countToolCalls } from './support/test-tools.ts';
import { writeHooks } from './support/hook-fixtures.ts';

const POLICY = `
  export default function register(ctx) {
    ctx.on('pre_tool_call', (event) => {
      if (event.tool_input?.label === 'blocked') return { action: 'block', message: 'payments to this label are frozen' };
      if (event.tool_input?.label === 'ask') return { action: 'approve', message: 'a payment needs a second pair of eyes', rule_key: 'payments' };
    });
  }`;

function toolThenReport(request: FakeRequest): FakeReply {
  const last = request.messages[request.messages.length - 1];
  if (last?.role === 'tool') return { text: `results: ${last.content}` };
  return { toolCalls: [{ name: 'send_payment', arguments: { label: request.lastUserText } }] };
}

const exec = promisify(execFile);
const digest = (text: string) => `sha256:${createHash('sha256').update(text).digest('hex')}`;

describe('the audit trail', () => {
  let fake: FakeLLM;
  let stack: Stack;
  const audit = async (query: string) => {
    const response = await stack.get(`/v1/audit?${query}`);
    expect(response.status).toBe(200);
    return response.body as { entries: any[]; next: string | null };
  };

  beforeAll(async () => {
    fake = await startFakeOpenAI();
    fake.handler = toolThenReport;
    const file = writeHooks({ 'policy.mjs': POLICY }, 'hooks:\n  - { name: payments-policy, event: pre_tool_call, module: ./policy.mjs }\n');
    stack = await startStack({ model: fake, testTools: true, env: { HERALD_HOOKS_FILE: file, HERALD_HOOKS_SECRET: 'audit-secret-0123456789abcdef' } });
  });
  afterAll(async () => {
    await stack.stop();
  });

  it('records every tool call with its argument digest and outcome, and the hook decision that blocked one', async () => {
    const ran = await stack.post('/v1/messages?wait=30', { chat_id: 'audit-pay', user_id: 'alice', text: 'rent' });
    const blocked = await stack.post('/v1/messages?wait=30', { chat_id: 'audit-pay', user_id: 'alice', text: 'blocked' });
    expect(blocked.body.reply.text).toBe('results: payments to this label are frozen');
    expect(await countToolCalls(stack.database.db, { label: 'blocked' })).toBe(0);
    const { entries } = await audit(`session_id=${ran.body.session_id}`);
    const calls = entries.filter((entry) => entry.kind === 'tool_call');
    // The fake model sends the arguments as JSON.stringify of what the handler gave it.
    const argsOf = (label: string) => JSON.stringify({ label });
    expect(calls.map((entry) => [entry.subject, entry.actor, entry.detail.outcome, entry.detail.arguments]).reverse()).toEqual([
      ['send_payment', 'api:alice', 'ok', digest(argsOf('rent'))],
      ['send_payment', 'api:alice', 'blocked_by_hook', digest(argsOf('blocked'))],
    ]);
    const decisions = entries.filter((entry) => entry.kind === 'hook_decision');
    expect(decisions).toHaveLength(1);
    expect(decisions[0]).toMatchObject({ subject: 'payments-policy', actor: 'api:alice', detail: { event: 'pre_tool_call', action: 'block', message: 'payments to this label are frozen' } });
  });

  it('records an approval a hook asked for, and who answered it', async () => {
    const asked = await stack.post('/v1/messages?wait=30', { chat_id: 'audit-approve', user_id: 'bob', text: 'ask' });
    expect(asked.status).toBe(202);
    expect(asked.body.waiting).toMatchObject({ kind: 'approval', tool: 'send_payment', prompt: 'a payment needs a second pair of eyes' });
    const answer = await stack.post(`/v1/waits/${asked.body.waiting.id}`, { decision: 'approve', user_id: 'bob' });
    expect(answer.status).toBe(200);
    const event = await stack.waitForEvent(asked.body.event_id);
    expect(event.reply.text).toBe('results: paid ask');
    const { entries } = await audit(`session_id=${asked.body.session_id}`);
    expect(entries.find((entry) => entry.kind === 'approval_request')).toMatchObject({ subject: 'send_payment', detail: { wait_id: asked.body.waiting.id } });
    expect(entries.find((entry) => entry.kind === 'approval_answer')).toMatchObject({ actor: 'api:bob', detail: { status: 'approved' } });
    // pre_tool_call fired once for the call, though the call ran twice through the gate (park, then run).
    expect(entries.filter((entry) => entry.kind === 'hook_decision').map((entry) => entry.detail.action)).toEqual(['approve']);
    expect(entries.filter((entry) => entry.kind === 'tool_call').map((entry) => entry.detail.outcome)).toEqual(['ok']);
  });

  it('records admin changes in the same transaction: a profile policy and a profile hook set', async () => {
    const patched = await stack.patch('/v1/profiles/main', { tool_policy: { disabled: ['web'] } });
    expect(patched.status).toBe(200);
    const module = await stack.put('/v1/profiles/main/hooks', { hooks: [{ name: 'm', event: 'pre_tool_call', module: '/tmp/evil.mjs' }] });
    expect(module.status).toBe(400);
    expect(module.body.error.message).toMatch(/module hooks are set in HERALD_HOOKS_FILE only/);
    const set = await stack.put('/v1/profiles/main/hooks', { hooks: [{ name: 'siem', event: 'post_tool_call', url: 'https://siem.example.com/in' }] });
    expect(set.status).toBe(200);
    expect((await stack.get('/v1/profiles/main/hooks')).body.hooks).toEqual([{ name: 'siem', event: 'post_tool_call', url: 'https://siem.example.com/in', timeout_ms: 2000, on_error: 'open' }]);
    const { entries } = await audit('kind=admin_change');
    expect(entries.map((entry) => [entry.subject, entry.actor])).toEqual([
      ['hooks:main', 'api'],
      ['profile:main', 'api'],
    ]);
    expect(entries[1].detail).toEqual({ fields: ['tool_policy'], tool_policy: { disabled: ['web'] } });
    await stack.put('/v1/profiles/main/hooks', { hooks: [] });
    await stack.patch('/v1/profiles/main', { tool_policy: {} });
  });

  it('records admin changes of cron jobs and memory from the writes themselves, whichever path made them', async () => {
    const created = await stack.post('/v1/cron/jobs', { user_id: 'dave', prompt: 'check the backups', schedule: 'every 1h' });
    expect(created.status).toBe(201);
    const jobId = created.body.job_id;
    expect((await stack.delete(`/v1/cron/jobs/${jobId}`)).status).toBe(204);
    const memory = await stack.database.db.insertInto('memory_entries').values({ profile_id: 'main', store: 'memory', content: 'the backup host is db-2' }).returning('id').executeTakeFirstOrThrow();
    expect((await stack.delete(`/v1/profiles/main/memory/${memory.id}`)).status).toBe(204);
    const { entries } = await audit('kind=admin_change&limit=500');
    const about = (subject: string) =>
      entries
        .filter((entry) => entry.subject === subject)
        .map((entry) => [entry.detail.op, entry.actor])
        .reverse();
    // Changes through the API token name 'api' (asActor sets herald.actor for the triggers).
    expect(about(`cron:${jobId}`)).toEqual([
      ['insert', 'api:dave'],
      ['delete', 'api'],
    ]);
    expect(about(`memory:${memory.id}`)).toEqual([
      ['insert', null],
      ['delete', 'api'],
    ]);
    // What the memory said is not copied into the trail.
    expect(JSON.stringify(entries)).not.toContain('db-2');
  });

  it('records skill pins and unpins, profile documents and cron changes through the API, by the API', async () => {
    const skill = '---\nname: audit-pin\ndescription: A skill to pin.\n---\n# Pin me\n\nSteps.\n';
    expect((await stack.post('/v1/profiles/main/skills/_import', { skills: [{ files: { 'SKILL.md': skill } }] })).status).toBeLessThan(300);
    expect((await stack.put('/v1/profiles/main/skills/audit-pin/pin', { pinned: true })).status).toBe(200);
    expect((await stack.put('/v1/profiles/main/skills/audit-pin/pin', { pinned: false })).status).toBe(200);
    expect((await stack.put('/v1/profiles/main/documents/AGENTS.md', { content: 'secret runbook text' })).status).toBe(200);
    expect((await stack.delete('/v1/profiles/main/documents/AGENTS.md')).status).toBe(204);
    const created = await stack.post('/v1/cron/jobs', { user_id: 'erin', prompt: 'rotate the logs', schedule: 'every 2h' });
    expect((await stack.patch(`/v1/cron/jobs/${created.body.job_id}`, { enabled: false })).status).toBe(200);
    const { entries } = await audit('kind=admin_change&limit=500');
    const about = (subject: string) =>
      entries
        .filter((entry) => entry.subject === subject)
        .map((entry) => [entry.detail.op, entry.actor])
        .reverse();
    expect(about('skill:audit-pin')).toEqual([
      ['import', 'api'],
      ['pin', 'api'],
      ['unpin', 'api'],
    ]);
    expect(
      entries
        .filter((entry) => entry.detail.document === 'AGENTS.md')
        .map((entry) => [entry.detail.op, entry.actor])
        .reverse(),
    ).toEqual([
      ['insert', 'api'],
      ['delete', 'api'],
    ]);
    expect(about(`cron:${created.body.job_id}`)).toEqual([
      ['insert', 'api:erin'],
      ['update', 'api'],
    ]);
    expect(JSON.stringify(entries)).not.toContain('secret runbook');
  });

  it('filters by person, kind and time, pages by keyset, and refuses bad filters with a 400', async () => {
    const all = await audit('person=alice&limit=500');
    expect(all.entries.length).toBeGreaterThanOrEqual(3);
    expect(all.entries.every((entry) => entry.actor === 'api:alice')).toBe(true);
    const pages: string[] = [];
    let cursor: string | null = null;
    do {
      const page: { entries: any[]; next: string | null } = await audit(`person=alice&limit=1${cursor ? `&before=${cursor}` : ''}`);
      pages.push(...page.entries.map((entry) => entry.id));
      cursor = page.next;
    } while (cursor !== null);
    expect(pages).toEqual(all.entries.map((entry) => entry.id));
    expect((await audit(`person=alice&from=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}`)).entries).toEqual([]);
    for (const bad of ['kind=everything', 'before=1%00', 'before=-1', 'session_id=not-a-uuid', 'from=yesterday', 'limit=0', 'sneaky=1']) {
      const response = await stack.get(`/v1/audit?${bad}`);
      expect(response.status, bad).toBe(400);
    }
  });

  it('cannot be changed or deleted through any route or statement; only the retention prune removes old entries', async () => {
    const before = (await audit('limit=500')).entries;
    const id = before[0].id;
    for (const [method, path] of [
      ['PUT', `/v1/audit/${id}`],
      ['PATCH', `/v1/audit/${id}`],
      ['DELETE', `/v1/audit/${id}`],
      ['DELETE', '/v1/audit'],
      ['POST', '/v1/audit'],
    ] as const) {
      const response = await fetch(`${stack.url}${path}`, { method, headers: { authorization: `Bearer ${TEST_TOKEN}` } });
      expect(response.status, `${method} ${path}`).toBe(404);
    }
    const db = stack.database.db;
    await expect(sql`UPDATE audit_log SET actor = 'mallory' WHERE id = ${id}`.execute(db)).rejects.toThrow(/append-only: UPDATE refused/);
    await expect(sql`DELETE FROM audit_log WHERE id = ${id}`.execute(db)).rejects.toThrow(/append-only: DELETE refused/);
    await expect(sql`TRUNCATE audit_log`.execute(db)).rejects.toThrow(/append-only: TRUNCATE refused/);
    expect((await audit('limit=500')).entries).toEqual(before);

    await db
      .insertInto('audit_log')
      .values({ kind: 'admin_change', actor: 'api', subject: 'old', detail: '{}', at: new Date(Date.now() - 400 * 86_400_000) })
      .execute();
    expect(await pruneAudit(db, 365)).toBe(1);
    expect((await audit('limit=500')).entries).toEqual(before);
  });

  it('cannot be emptied by the database role: no prune mark, and herald_prune_audit(0) keeps the last 30 days (issue 39)', async () => {
    const db = stack.database.db;
    await db.insertInto('audit_log').values({ kind: 'admin_change', actor: 'api', subject: 'recent', detail: '{}' }).execute();
    const before = (await audit('limit=500')).entries;
    expect(before.length).toBeGreaterThan(0);
    // The mark the prune used to set on its own transaction: anyone could set it.
    await expect(
      db.transaction().execute(async (trx) => {
        await sql`SET LOCAL herald.audit_prune = 'on'`.execute(trx);
        await sql`DELETE FROM audit_log`.execute(trx);
      }),
    ).rejects.toThrow(/append-only: DELETE refused/);
    await expect(sql`DELETE FROM audit_log WHERE at > now() - interval '29 days'`.execute(db)).rejects.toThrow(/append-only: DELETE refused/);
    const pruned = await sql<{ removed: string }>`SELECT herald_prune_audit(0) AS removed`.execute(db);
    expect(pruned.rows[0]!.removed).toBe('0');
    expect((await audit('limit=500')).entries).toEqual(before);
    // Past the minimum age an entry can go, as the retention prune removes it; younger ones never.
    await db
      .insertInto('audit_log')
      .values({ kind: 'admin_change', actor: 'api', subject: 'aged', detail: '{}', at: new Date(Date.now() - 31 * 86_400_000) })
      .execute();
    expect((await sql<{ removed: string }>`SELECT herald_prune_audit(0) AS removed`.execute(db)).rows[0]!.removed).toBe('1');
    expect((await audit('limit=500')).entries).toEqual(before);
    // The config and the SQL name the same minimum.
    const minimum = await sql<{ days: number }>`SELECT extract(day FROM herald_audit_min_age())::int AS days`.execute(db);
    expect(minimum.rows[0]!.days).toBe(AUDIT_MIN_RETENTION_DAYS);
    expect(() => loadConfig({ HERALD_AUDIT_RETENTION_DAYS: String(AUDIT_MIN_RETENTION_DAYS - 1) })).toThrow(/HERALD_AUDIT_RETENTION_DAYS/);
    expect(loadConfig({ HERALD_AUDIT_RETENTION_DAYS: '0' }).hooks.auditRetentionDays).toBe(0);
  });

  // Three `herald` processes start from source here; each may take PROCESS_START_MS on a busy machine.
  it('prints the trail in the terminal: herald audit', { timeout: 3 * PROCESS_START_MS }, async () => {
    const env = { ...process.env, ...stack.env, HERALD_URL: stack.url };
    const { stdout } = await exec(process.execPath, [HERALD_BIN, 'audit', '--kind', 'hook_decision', '--person', 'alice'], { env });
    expect(stdout).toMatch(/^\S+ \S+ {2}#\d+ {2}hook_decision {2}api:alice {2}payments-policy {2}\{"event":"pre_tool_call".*"action":"block"/m);
    const json = JSON.parse((await exec(process.execPath, [HERALD_BIN, 'audit', '--kind', 'approval_answer', '--json'], { env })).stdout);
    expect(json.entries.map((entry: any) => entry.actor)).toEqual(['api:bob']);
    const refused = await exec(process.execPath, [HERALD_BIN, 'audit', '--kind', 'everything'], { env }).catch((error) => error);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('herald: audit failed (400): kind: expected one of tool_call');
  });
});
