/**
 * A turn waiting on a person: tool waits (approvals and clarify questions), who may answer them,
 * answering, expiring and withdrawing them, session approvals of a pattern and recorded refusals.
 */
export {
  expireWaits,
  findWait,
  getWait,
  isPatternApproved,
  listWaits,
  mayAnswerWait,
  NOT_YOURS_REPLY,
  pendingWaitOf,
  recordRefusal,
  resolveWait,
  takeAnsweredWaits,
  withdrawWaits,
  WITHDRAWN_BY_NEW,
} from './tool-waits.ts';
export type { WaitView } from './tool-waits.ts';
