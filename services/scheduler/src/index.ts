export { Reconciler } from './reconciler.ts';
export type { ReconcilerOptions } from './reconciler.ts';
export { CronService } from './cron-service.ts';
export type { CronServiceOptions } from './cron-service.ts';
export { WebhookSender } from './webhook-sender.ts';
export { HookDeliveryService } from './hook-delivery.ts';
export type { HookDeliveryOptions } from './hook-delivery.ts';
export { HookEventService } from './hook-events.ts';
export type { HookEventOptions } from './hook-events.ts';
