export { createDb, createPool, ensureDatabase, withDefaultUser } from './db.ts';
export type { Db, DbOptions } from './db.ts';
export { migrate, MIGRATIONS_DIR } from './migrate.ts';
export type { MigrationResult } from './migrate.ts';
export { SCHEMA_COLUMNS } from './schema.ts';
export type {
  Database,
  EventStatus,
  MessageRole,
  MemoryStore,
  InFlightPart,
  OutboxStatus,
  QueueMode,
  ReviewKind,
  ReviewStatus,
  StoredToolCall,
  TurnStatus,
  WaitKind,
  WaitStatus,
} from './schema.ts';
export { sessionKey } from './session-key.ts';
export type { RouteAddress } from './session-key.ts';
export type { AcceptedEvent, AcceptOptions, EventView, EventWaiting, Inbox, InboundMessage, PendingEvent, SessionControl } from './inbox.ts';
export {
  acceptInbound,
  getEvent,
  openInbox,
  parseCommand,
  chatTarget,
  BacklogFullError,
  NEW_SESSION_REPLY,
  QUEUE_MODES,
  CHAT_COMMANDS,
  HELP_REPLY,
} from './inbox.ts';
export { claimLease, renewLease, releaseLease, fenced, LeaseLostError } from './leases.ts';
export type { Lease, LeasedSession } from './leases.ts';
export { appendMessages, loadTranscript } from './transcript.ts';
export type { NewMessage, StoredMessage } from './transcript.ts';
export { findStrandedSessions } from './stranded.ts';
export type { StrandedSession } from './stranded.ts';
export { isConnectionError } from './infra-errors.ts';
export { startTurn, resumeTurn, recordStep, finishTurn, suspendTurn } from './turn-store.ts';
export type { ModelCallRow, NewWait, TurnEnd, WaitButton } from './turn-store.ts';
export {
  expireWaits,
  findWait,
  getWait,
  isPatternApproved,
  listWaits,
  pendingWaitOf,
  recordRefusal,
  resolveWait,
  takeAnsweredWaits,
} from './tool-waits.ts';
export type { WaitView } from './tool-waits.ts';
export { readMemory, writeMemory, deleteMemoryEntry, usageOf } from './memory-store.ts';
export type { MemoryEntry, MemoryOperation, MemoryScope, MemoryState, MemoryWriteResult } from './memory-store.ts';
export { loadPromptSources } from './prompt-sources.ts';
export type { PromptSources } from './prompt-sources.ts';
export {
  parseSkillMd,
  parseFrontmatter,
  skillNameError,
  supportPathError,
  SKILL_DESCRIPTION_MAX,
  SKILL_FILE_MAX_BYTES,
  SKILL_MD,
  SKILL_MD_MAX_CHARS,
  SKILL_NAME_MAX,
  SKILL_SUPPORT_DIRS,
} from './skill-format.ts';
export type { SkillMeta } from './skill-format.ts';
export {
  applySkillChange,
  importSkills,
  getSkill,
  listSkills,
  readSkillFiles,
  setSkillPinned,
  skillHistory,
  skillText,
  viewedKey,
} from './skill-store.ts';
export type { SkillBundle, SkillImportResult, SkillChange, SkillOrigin, SkillSummary, SkillWriteOptions, SkillWriteResult } from './skill-store.ts';
export {
  claimReview,
  fencedReviewWrite,
  findDueReviews,
  finishReview,
  getReview,
  listReviews,
  recordTurnCompletion,
  renewReviewClaim,
  retryReviewLater,
  ReviewClaimLostError,
} from './review-store.ts';
export type { CompletionOutcome, ReviewClaim, ReviewResult, ReviewRow, ReviewView, TurnCompletedEvent } from './review-store.ts';
export {
  enqueueOutbound,
  claimOutbound,
  progressFor,
  markDelivered,
  markAttemptFailed,
  listDeliveries,
  DeliveryError,
  ClaimLostError,
  CHAT_PLATFORMS,
} from './outbox.ts';
export type {
  OutboundRequest,
  OutboundItem,
  OutboundDelivery,
  OutboundSender,
  DeliveryProgress,
  DeliveryReceipt,
  DeliveryErrorOptions,
  DeliveryView,
  ClaimedRow,
} from './outbox.ts';
export { DeliveryConsumer, listenForOutbox } from './delivery-consumer.ts';
export type { DeliveryConsumerOptions } from './delivery-consumer.ts';
export { ScheduleError, SCHEDULE_HELP, parseSchedule, nextOccurrence, previousOccurrence, misfireGraceMs, isValidTimeZone, zonedTimeToInstant } from './cron-schedule.ts';
export type { CronSchedule } from './cron-schedule.ts';
export { parseDeliver, describeTarget, DeliverSpecError, DELIVER_HELP } from './cron-targets.ts';
export {
  createCronJob,
  getCronJob,
  listCronJobs,
  updateCronJob,
  pauseCronJob,
  resumeCronJob,
  removeCronJob,
  requestCronRun,
  listCronRuns,
  cronNow,
  scheduleOf,
  CronJobInputError,
  CRON_MISSED_POLICIES,
  CRON_SESSION_MODES,
  SCHEDULED_PLATFORM,
  scheduledRunFor,
} from './cron-store.ts';
export type { CronJobInput, CronJobPatch, CronJobView, CronJobState, CronRunView, CronDelivery, CronScope, ScheduledRun } from './cron-store.ts';
export type { CronMissedPolicy, CronOrigin, CronRunStatus, CronSessionMode, CronTarget } from './schema.ts';
export { acquirePlatformLease, renewPlatformLease, releasePlatformLease } from './platform-leases.ts';
export {
  searchHistory,
  visibleSessions,
  canSeeSession,
  substringSnippet,
  SEARCH_SORTS,
  SEARCH_SCAN_ROWS,
  RECENT_SCAN_WINDOW,
  MAX_SEARCH_LIMIT,
  MAX_HITS_PER_SESSION,
} from './history-search.ts';
export type { SearchHit, SearchOptions, SearchResult, SearchRoute, SearchScope, SearchSort, SessionResult } from './history-search.ts';
export { parseSearchQuery, SearchQueryError, MAX_QUERY_CHARS, MAX_QUERY_TERMS } from './search-query.ts';
export type { ParsedQuery, SearchTerm } from './search-query.ts';
