import { sql } from 'kysely';
import { z } from 'zod';
import { sleep } from '@herald/core';
import { defineTool } from '@herald/tools';
import type { ToolContext } from '@herald/tools';

/**
 * Plugin tools for tests, loaded through HERALD_TOOL_PLUGINS like any operator's plugin. Each call
 * is recorded in `test_tool_calls` so a test can count how often a side effect really ran.
 */
async function record(context: ToolContext, tool: string, label: string): Promise<void> {
  await sql`CREATE TABLE IF NOT EXISTS test_tool_calls (tool text, label text, session_id uuid, at timestamptz DEFAULT clock_timestamp())`.execute(
    context.db,
  );
  await sql`INSERT INTO test_tool_calls (tool, label, session_id) VALUES (${tool}, ${label}, ${context.sessionId})`.execute(context.db);
}

const args = z.object({ label: z.string(), sleep_ms: z.number().int().min(0).max(60_000).optional() });

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
      await sleep(input.sleep_ms ?? 0, context.signal);
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
      await sleep(input.sleep_ms ?? 0, context.signal);
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
