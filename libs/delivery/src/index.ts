export { enqueueOutbound, claimOutbound, progressFor, markDelivered, markAttemptFailed, listDeliveries, DeliveryError, ClaimLostError } from './outbox.ts';
export type {
  OutboundRequest,
  OutboundItem,
  OutboundDelivery,
  OutboundFile,
  OutboundSender,
  DeliveryProgress,
  DeliveryReceipt,
  DeliveryErrorOptions,
  DeliveryView,
  ClaimedRow,
  DraftCalls,
} from './outbox.ts';
export { replyKeyOf, draftMessageIds, recordDraftMessages, dropDrafts, otherDraftIds, chatHasOpenOutbox } from './chat-drafts.ts';
export type { ChatDraftKey } from './chat-drafts.ts';
export { DeliveryConsumer, listenForOutbox } from './delivery-consumer.ts';
export type { DeliveryConsumerOptions } from './delivery-consumer.ts';
export { listFailedDeliveries, retryFailedDelivery, discardFailedDelivery } from './failed-deliveries.ts';
export type { FailedDelivery } from './failed-deliveries.ts';
export { deliveriesByKeyPrefix } from './keyed-deliveries.ts';
export type { KeyedDelivery } from './keyed-deliveries.ts';
export { listOutboxJobs } from './outbox-jobs.ts';
