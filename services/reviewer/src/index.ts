export { ReviewerService } from './reviewer-service.ts';
export type { ReviewerServiceOptions, ReviewRunOutcome } from './reviewer-service.ts';
export { runReview, ReviewRunError } from './review-agent.ts';
export { REVIEW_MAX_ITERATIONS, REVIEW_TOOL_NAMES, refusedToolResult, reviewInstruction } from './review-prompt.ts';
