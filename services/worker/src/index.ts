export { WorkerService } from './worker-service.ts';
export type { WorkerServiceOptions } from './worker-service.ts';
export { NO_MODEL_REPLY, TURN_ATTEMPT_BUDGET } from './turn-runner.ts';
