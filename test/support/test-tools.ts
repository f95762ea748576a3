import { sql } from 'kysely';
import { z } from 'zod';
import { sleep } from '@herald/core';
import type { Db } from '@herald/db';
import { defineTool } from '@herald/tools';
import type { ToolContext } from '@herald/tools';

/**
 * Plugin tools for tests, loaded through HERALD_TOOL_PLUGINS like any operator's plugin. Each call
 * is recorded in `test_tool_calls` so a test can count how often a side effect really ran.
 */
async function record(context: ToolContext, tool: string, label: string): Promise<void> {
  await sql`CREATE TABLE IF NOT EXISTS test_tool_calls (tool text, label text, session_id uuid, at timestamptz DEFAULT clock_timestamp())`.execute(context.db);
  await sql`INSERT INTO test_tool_calls (tool, label, session_id) VALUES (${tool}, ${label}, ${context.sessionId})`.execute(context.db);
}

/** How many recorded calls match; 0 before the first call of any test tool creates the table. */
export async function countToolCalls(db: Db, where: { tool?: string; label?: string; sessionId?: string }): Promise<number> {
  const exists = await sql<{ ok: boolean }>`SELECT to_regclass('test_tool_calls') IS NOT NULL AS ok`.execute(db);
  if (!exists.rows[0]?.ok) return 0;
  const rows = await sql<{ n: string }>`
    SELECT count(*) AS n FROM test_tool_calls
    WHERE (${where.tool ?? null}::text IS NULL OR tool = ${where.tool ?? null})
      AND (${where.label ?? null}::text IS NULL OR label = ${where.label ?? null})
      AND (${where.sessionId ?? null}::uuid IS NULL OR session_id = ${where.sessionId ?? null})`.execute(db);
  return Number(rows.rows[0]?.n);
}

const args = z.object({
  label: z.string(),
  sleep_ms: z.number().int().min(0).max(60_000).optional(),
  /** Sleeps only when no call with this label ran before: a call to interrupt, whose replay does not wait. */
  first_sleep_ms: z.number().int().min(0).max(60_000).optional(),
});

async function pause(input: z.infer<typeof args>, context: ToolContext, tool: string): Promise<void> {
  const first = input.first_sleep_ms !== undefined && (await countToolCalls(context.db, { tool, label: input.label })) === 1;
  await sleep(first ? (input.first_sleep_ms ?? 0) : (input.sleep_ms ?? 0), context.signal);
}

export const tools = [
  defineTool({
    name: 'send_payment',
    toolset: 'test',
    description: 'A side effect that must never run twice.',
    guidance: '',
    schema: args,
    replaySafe: false,
    async execute(input, context) {
      await record(context, 'send_payment', input.label);
      await pause(input, context, 'send_payment');
      return `paid ${input.label}`;
    },
  }),
  defineTool({
    name: 'slow_lookup',
    toolset: 'test',
    description: 'A read that is safe to repeat.',
    guidance: '',
    schema: args,
    replaySafe: true,
    async execute(input, context) {
      await record(context, 'slow_lookup', input.label);
      await pause(input, context, 'slow_lookup');
      return `found ${input.label}`;
    },
  }),
  defineTool({
    name: 'wire_transfer',
    toolset: 'test',
    description: 'Moves money: large amounts need the person to approve, absurd ones are never allowed.',
    guidance: '',
    schema: z.object({ label: z.string(), amount: z.number().int().min(1) }),
    replaySafe: false,
    refuse: (input) => (input.amount > 1_000_000 ? 'transfers over 1,000,000 are never made by the agent' : null),
    needsApproval: (input) => (input.amount > 100 ? { patternKey: 'transfer over 100', reason: `transfer ${input.amount} (${input.label})` } : null),
    async execute(input, context) {
      await record(context, 'wire_transfer', input.label);
      return `transferred ${input.amount} for ${input.label}`;
    },
  }),
];
