import type { Transaction } from 'kysely';
import type { z } from 'zod';
import type { Database, Db } from '@herald/db';

/** A tool as a model sees it: its name, what it is for, its arguments' JSON Schema. */
export interface ToolDefinition {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

/** Who is running the tool loop: a person's chat turn, or an unattended background run. */
export type CallerRole = 'chat' | 'cron' | 'review' | 'subagent';

/** What a tool may touch while it runs: reads through `db`, writes only through `fencedWrite`. */
export interface ToolContext {
  sessionId: string;
  turnId: string;
  profileId: string;
  userId: string;
  /** The platform of the session's route (api, cli, telegram, discord, cron...). */
  platform: string;
  role: CallerRole;
  db: Db;
  signal: AbortSignal;
  /**
   * The session's workspace directory (absolute). It lives under a root shared by all workers, so a
   * session finds its files whichever worker runs it; tools create it on first use.
   */
  workspaceDir: string;
  /** Runs writes in a transaction checked against the session lease's fencing token. */
  fencedWrite<T>(fn: (trx: Transaction<Database>) => Promise<T>): Promise<T>;
  /**
   * Set only when a background review runs the tool: writes get the review's guards (pinned
   * skills refused, a file viewed before it is changed) and are attributed to the review.
   */
  review?: { id: string; viewed: Set<string> };
  /** The tools offered in this turn: what a child of delegate_task may be given at most. */
  offered?: readonly string[];
  /** Whether the person is an operator (HERALD_OPERATORS today, a role later); unset: not. */
  operator?: boolean;
  /** HERALD_MAIL_ALLOWED_DOMAINS: where a job this person saves may mail reports; unset: anywhere. */
  mailDomains?: readonly string[];
  /** The accounts each chat platform has here: a job naming another bot is refused; unset: not checked. */
  platformAccounts?: Readonly<Record<string, readonly string[]>>;
  /** Whether the turn's model takes images (HERALD_MODEL_VISION); unset: it does not. */
  modelTakesImages?: boolean;
}

/** The person's answer to a question a tool asked them. */
export interface PersonAnswer {
  answered: boolean;
  answer: string | null;
}

/** What one call sees: the turn's context plus the call itself. */
export interface CallContext extends ToolContext {
  toolCallId: string;
  /**
   * Gives the model an image with this call's result (a screenshot). False when the model takes
   * no images or the image is too large for it: the tool's text must then say what it holds.
   */
  showModel(image: { mime: string; bytes: Buffer }): boolean;
  /**
   * Asks the person and waits for the answer without holding the worker: the first time, the turn
   * is parked and the worker lets the session go; when the person answers (or the wait lapses) the
   * turn resumes on any worker and this call returns the answer. Refused in background runs.
   */
  askPerson(question: string, choices?: readonly string[]): Promise<PersonAnswer>;
  /**
   * Parks the turn until child runs end (delegate_task): throws, and the turn resumes on any
   * worker once the wait `waitId` is answered, calling this tool again with the same call.
   */
  parkOnRuns(waitId: string, runs: number): never;
  /**
   * The definitions of the named tools in the turn's own registry: the built-in one plus the
   * session's MCP tools (ToolRegistry.withTools), which a registry captured at start cannot see.
   */
  toolDefinitions?(names: readonly string[]): ToolDefinition[];
}

/** A call that may only run once a person says yes; `patternKey` is what "allow for this session" remembers. */
export interface ApprovalNeed {
  patternKey: string;
  /** One line for the person: why this call needs their approval. */
  reason: string;
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
   * The JSON Schema sent to the model, when the tool brings its own (an MCP server's, cleaned);
   * without it the schema is generated from `schema`.
   */
  parameters?: Record<string, unknown>;
  /**
   * Whether re-running the call after a crash is harmless. A resumed turn re-runs safe tools and
   * tells the model "interrupted, outcome unknown" for unsafe ones instead of repeating them.
   */
  replaySafe: boolean;
  /**
   * Environment variables the tool needs (an API key, say). A tool whose requirement is missing is
   * not offered at all.
   */
  requiresEnv?: readonly string[];
  /** Set when the tool cannot be offered on this worker, saying why (no sandbox, say). */
  unavailable?: string;
  /** A reason the call is refused outright, whatever anyone approves (the hardline list). */
  refuse?(args: Args): string | null;
  /** Set when this particular call needs a person's approval before it runs. */
  needsApproval?(args: Args): ApprovalNeed | null;
  execute(args: Args, context: CallContext): Promise<string>;
}

/** Erases the argument type so tools of different shapes share one registry. */
export function defineTool<Args>(tool: Tool<Args>): Tool<unknown> {
  return tool as unknown as Tool<unknown>;
}
