import type { Transaction } from 'kysely';
import type { z } from 'zod';
import type { Database, Db } from '@herald/session';

/** What a tool may touch while it runs: reads through `db`, writes only through `fencedWrite`. */
export interface ToolContext {
  sessionId: string;
  turnId: string;
  profileId: string;
  userId: string;
  db: Db;
  signal: AbortSignal;
  /** Runs writes in a transaction checked against the session lease's fencing token. */
  fencedWrite<T>(fn: (trx: Transaction<Database>) => Promise<T>): Promise<T>;
  /**
   * Set only when a background review runs the tool: writes get the review's guards (pinned
   * skills refused, a file viewed before it is changed) and are attributed to the review.
   */
  review?: { id: string; viewed: Set<string> };
}

export interface Tool<Args = unknown> {
  name: string;
  /** The toolset this tool belongs to; exposure is decided per toolset. */
  toolset: string;
  description: string;
  /** One or two lines for the system prompt, included only when the tool is enabled. */
  guidance: string;
  schema: z.ZodType<Args>;
  /**
   * Whether re-running the call after a crash is harmless. A resumed turn re-runs safe tools and
   * tells the model "interrupted, outcome unknown" for unsafe ones instead of repeating them.
   */
  replaySafe: boolean;
  execute(args: Args, context: ToolContext): Promise<string>;
}

/** Erases the argument type so tools of different shapes share one registry. */
export function defineTool<Args>(tool: Tool<Args>): Tool<unknown> {
  return tool as unknown as Tool<unknown>;
}
