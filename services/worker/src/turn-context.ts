import type { Config, Logger, PriceTable } from '@herald/core';
import type { ChatMessage, LoopResult, ModelCallRecord, Provider, RecallProvider } from '@herald/agent';
import type { Db, ProfileCache, QueueMode } from '@herald/db';
import type { Hooks } from '@herald/hooks';
import type { McpTools } from '@herald/mcp';
import type { TurnStreamStore } from '@herald/queue';
import type { FinishedTurn } from '@herald/inbox';
import type { SubagentRun } from '@herald/subagents';
import type { Lease, LeasedSession, PendingEvent } from '@herald/leases';
import type { TranscriptCache } from '@herald/transcript';
import type { CallerRole, ToolExposure, ToolRegistry } from '@herald/tools';
import type { ProfileModels } from './profile-models.ts';
import type { TurnCompaction } from './turn-compaction.ts';
import type { AnswerDrafts, TurnDraft } from './turn-draft.ts';
import type { TurnHooks } from './turn-hooks.ts';

// What the steps of a turn pass each other (docs/decisions/2026-12-06-turn-pipeline.md). The turn
// is a pipeline: setUpTurn (turn-setup.ts) → readHistory (turn-history.ts) → openLoop and its runs
// (turn-loop.ts) → endTurn or parkTurn (turn-finish.ts), run by runTurn (turn-runner.ts); the drain
// then hands the result over (handOverTurn, turn-completion.ts). Every step takes a readonly
// context and returns what it adds. This module holds types only, so no step imports another's.

export interface TurnDependencies {
  config: Config;
  db: Db;
  provider: Provider | null;
  /** Writes compression summaries (HERALD_SUMMARY_MODEL); the main provider when not given. */
  summariser?: Provider | null | undefined;
  registry: ToolRegistry;
  /** Which tools a session is offered and each caller may run, from the profile's tool policy. */
  exposure: ToolExposure;
  logger: Logger;
  /** Per-turn recall, injected next to the user message; null when off. */
  recall: RecallProvider | null;
  /** Lifecycle hooks (docs/hooks.md); none when not given. */
  hooks?: Hooks | undefined;
  /** The model of delegate_task's children (HERALD_DELEGATION_MODEL); the main provider when not given. */
  childProvider?: Provider | null | undefined;
  /** Where running turns publish their progress for followers; nothing is streamed without it. */
  stream?: TurnStreamStore | undefined;
  /** Chats that see the answer grow while it is written (turn-draft.ts); none when not given. */
  drafts?: AnswerDrafts | undefined;
  /** MCP servers' tools (docs/tools.md#mcp-servers); none when no server is configured. */
  mcp?: McpTools | undefined;
  /** Profiles' own models (their main, summary and children's models); the ones above when a profile has none. */
  profileModels?: ProfileModels | undefined;
  /** What model calls cost (HERALD_PRICES_FILE, then the built-in table); the built-in table when not given. */
  prices?: PriceTable | undefined;
  /** This worker's parsed transcripts between turns; every turn reads them whole without it. */
  transcripts?: TranscriptCache | undefined;
  /** The process's profile cache: budgets are not read while none is on (@herald/limits budgetsOn). */
  profiles?: ProfileCache | undefined;
}

export interface TurnResult {
  eventIds: string[];
  outcome: LoopResult['outcome'] | 'no_model' | 'attempts_exhausted' | 'stopped' | 'error' | 'compressed' | 'command';
  /** Outcome 'compressed': the session ended and this child carries on (with the open events). */
  childSessionId?: string;
  /** The session's inbox as the turn's last write read it (the lease released when it was empty). */
  next?: FinishedTurn;
  /** The finished turn, for its completion event (background review). */
  turn?: { turnId: string; sessionId: string; iterations: number; profileId: string; userId: string; platform: string; offered: readonly string[] };
  /** The system prompt this turn stored (the session's first turn): the drain's next turn sends it. */
  prompt?: string;
}

/** How the running turn is steered from outside: lease loss, shutdown, /stop and interrupts. */
export interface TurnControl {
  /** Aborts the turn: lease lost, shutdown deadline, or a person's /stop. */
  signal: AbortSignal;
  /** True when the abort came from /stop: the turn ends with a reply instead of being handed back. */
  stopRequested(): boolean;
  /** A fresh signal per model call, aborted when a message arrives in interrupt mode. */
  modelSignal(): AbortSignal;
  /** Confirms the lease is still ours when the last renewal is stale; throws LeaseLostError if not. */
  ensureLease(): Promise<void>;
  /** Turns this drain already compacted mid-turn: a second overflow of one turn is answered as an error. */
  compacted: Set<string>;
}

/** What the drain gives a turn. */
export interface TurnInput {
  readonly deps: TurnDependencies;
  readonly lease: Lease;
  readonly session: Readonly<LeasedSession>;
  readonly queueMode: QueueMode;
  readonly events: readonly PendingEvent[];
  readonly control: TurnControl;
}

/**
 * How a turn differs by its session (a chat, a scheduled run, a child of delegate_task), decided
 * once at set up by shapeTurn (turn-shape.ts); no step asks what kind of session it runs in.
 */
export interface TurnShape {
  readonly role: CallerRole;
  /** What may run under the profile's policy as it is now (for `userId`, else session-wide), narrowed to a child's tools. */
  permitted(userId?: string): string[];
  readonly maxIterations: number;
  /** The turn's `error` when it ends at its iteration budget: a child's run records it as its exit reason. */
  readonly iterationLimitError: string | null;
  /** The workspace directory its tools work in (a child shares its delegating session's). */
  readonly workspace: string;
  /** The model it calls: the profile's (or the deployment's), a child's own model for a child. */
  readonly provider: Provider | null;
  /** Recalled snippets join its user message (a child works from its focused prompt only). */
  readonly recall: boolean;
  /** Its answer is shown growing in the chat (a child's goes to its parent instead). */
  readonly drafted: boolean;
  /** A child's run: what subagent_start and subagent_stop carry. */
  readonly run: SubagentRun | undefined;
}

/** A set-up turn: everything fixed from its start to its end. */
export interface TurnContext extends TurnInput {
  readonly turnId: string;
  /** The events it started with (messages steered in later join the loop's own list, OpenedTurn). */
  readonly eventIds: readonly string[];
  readonly shape: TurnShape;
  /** Offered to the model: the session-wide set, so every person in a chat sees the same prefix. */
  readonly offered: readonly string[];
  /** The tools whose definitions every request carries: all offered, unless the schema budget defers some to tool_search. */
  readonly sent: readonly string[];
  readonly callerId: string;
  readonly compaction: TurnCompaction | undefined;
  readonly attempts: number;
  /** The session's system prompt (null only when a resumed turn's session has none: an error). */
  readonly systemPrompt: string | null;
  /** The prompt this turn built and stored, on the session's first turn. */
  readonly newPrompt: string | undefined;
  /** Appended to the reply: the notice of a compression before the turn. */
  readonly note: string | undefined;
  /** The session's ineffective compressions, when the start of the turn read them already. */
  readonly ineffective: number | undefined;
  /** The transcript before this turn's messages, when the start of the turn read it already. */
  readonly history: readonly ChatMessage[] | undefined;
}

/** What opening the loop produced that the end of the turn uses. */
export interface OpenedTurn {
  /** The turn's hooks (subagent_stop fires from the end); null without hooks or before the loop opened. */
  readonly hooks: TurnHooks | null;
  /** The answer shown growing in the chat (turn-draft.ts). */
  readonly draft: TurnDraft | undefined;
  /** The turn's events: the loop's own list, which messages steered into the turn join. */
  readonly eventIds: readonly string[];
}

/** How the turn ends with a reply. */
export interface Ending {
  text: string;
  outcome: TurnResult['outcome'];
  iterations: number;
  finalCall?: ModelCallRecord | undefined;
  /** Appended to the reply: a compression's notice, from before the turn or the middle of it. */
  note: string | undefined;
}
