export { readMemory, readOwnMemory, writeMemory, deleteMemoryEntry, memoryEntryOwner, usageOf } from './memory-store.ts';
export type { MemoryEntry, MemoryOperation, MemoryScope, MemoryState, MemoryWriteResult } from './memory-store.ts';
export { loadPromptSources, promptPerson } from './prompt-sources.ts';
export type { PromptSources } from './prompt-sources.ts';
export { BUILTIN_SKILLS_DIR, loadBuiltinSkills, seedBuiltinSkills, seedProfileBuiltinSkills, shippedBuiltinSkills } from './builtin-skills.ts';
export type { BuiltinSkill, SeedOutcome } from './builtin-skills.ts';
export { readContextFiles, truncateContextFile, CONTEXT_FILE_MAX_CHARS } from './context-files.ts';
export type { ContextFile } from './context-files.ts';
export {
  parseSkillMd,
  parseFrontmatter,
  skillNameError,
  categoryError,
  supportPathError,
  SKILL_DESCRIPTION_MAX,
  SKILL_FILE_MAX_BYTES,
  SKILL_MD,
  SKILL_MD_MAX_CHARS,
  SKILL_NAME_MAX,
  SKILL_SUPPORT_DIRS,
} from './skill-format.ts';
export type { SkillMeta } from './skill-format.ts';
export { getSkill, listSkills, readOfferedBuiltin, readSkillFiles, setSkillPinned, setSkillShared, visibleTo, skillHistory, skillText, viewedKey } from './skill-store.ts';
export type { SkillOrigin, SkillSummary, SkillViewer } from './skill-store.ts';
export { applySkillChange } from './skill-change.ts';
export { copyProfileSkills } from './skill-copy.ts';
export type { SkillChange, SkillWriteOptions, SkillWriteResult } from './skill-change.ts';
export { importSkills } from './skill-import.ts';
export type { SkillBundle, SkillImportResult } from './skill-import.ts';
export {
  REVIEW_QUEUE,
  REVIEW_DEAD_LETTER_QUEUE,
  reviewQueues,
  recordTurnCompletion,
  sendReviewJob,
  startReviewRun,
  fencedReviewWrite,
  finishReview,
  handBackReview,
  giveUpReview,
  openReviews,
  getReview,
  listReviews,
  ReviewSupersededError,
} from './review-store.ts';
export type { CompletionOutcome, ReviewJob, ReviewResult, ReviewRow, ReviewRun, ReviewView, TurnCompletedEvent } from './review-store.ts';
export { findInjection, scanForInjection, scanInPlace, promptSafe } from './injection-scan.ts';
export type { InjectionFinding, ScanPlace } from './injection-scan.ts';
export { listReviewJobs } from './review-jobs.ts';
