import { sql } from 'kysely';
import { z } from 'zod';
import { defineTool } from '@herald/tools';

/**
 * A stand-in `terminal` tool, loaded as a plugin, so a session offers it and a background review
 * can be seen refusing it. Every real run is recorded in `test_terminal_calls`.
 */
export const tools = [
  defineTool({
    name: 'terminal',
    toolset: 'terminal',
    description: 'Run a shell command.',
    guidance: '',
    schema: z.object({ command: z.string() }),
    replaySafe: false,
    async execute(input, context) {
      await sql`CREATE TABLE IF NOT EXISTS test_terminal_calls (command text, session_id uuid)`.execute(context.db);
      await sql`INSERT INTO test_terminal_calls (command, session_id) VALUES (${input.command}, ${context.sessionId})`.execute(context.db);
      return `ran ${input.command}`;
    },
  }),
];
