/**
 * Subagent runs: the child sessions a delegate call creates, their rows and states, listing,
 * cancelling and finding the run of a child session.
 */
export { cancelRuns, createChildRuns, getRun, listRuns, openBackgroundRuns, runOfChildSession, runsOfCall, SUBAGENT_PLATFORM } from './subagent-runs.ts';
export type { ChildRunsInput, CreatedChild, NewChildRun, RunFilter, SubagentRun } from './subagent-runs.ts';
