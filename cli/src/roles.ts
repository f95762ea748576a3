// The package's entry (@herald/cli): every role's wiring, for the tests and the benchmarks that
// run roles in their own process. The `herald` command does not import this file: it loads each
// role's module when it runs that role (role-commands.ts), so a worker never loads the ingress's
// HTTP stack, nor an ingress the model SDK (docs/decisions/2026-12-02-role-startup.md).
export { queueSettings } from './queue-settings.ts';
export { startEmbeddedPostgres } from './embedded-postgres.ts';
export type { EmbeddedPostgres } from './embedded-postgres.ts';
export { jobQueues, loadToolPlugins, openDb, openProfileCache, openToolSandbox, openTransport, prepareDatabase } from './role-wiring.ts';
export { providerFromConfig, summariserFromConfig } from './provider-wiring.ts';
export { startIngress } from './ingress-role.ts';
export { startWorker } from './worker-role.ts';
export { startReviewer } from './reviewer-role.ts';
export { startScheduler } from './scheduler-role.ts';
