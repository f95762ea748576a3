export { Reconciler } from './reconciler.ts';
export type { ReconcilerOptions } from './reconciler.ts';
