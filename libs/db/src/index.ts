export { createDb, createPool, ensureDatabase, probeDatabase, withDefaultUser } from './db.ts';
export type { Db, DbOptions } from './db.ts';
export { migrate, MIGRATIONS_DIR } from './migrate.ts';
export type { MigrationResult } from './migrate.ts';
export { ALLOWED_VALUES } from './schema.ts';
export { isConnectionError } from './infra-errors.ts';
export type * from './schema.ts';
export { PROFILE_CACHE_APPLICATION_NAME, PROFILE_CHANGED_CHANNEL, ProfileCache, readProfileSettings } from './profile-cache.ts';
export type { ProfileCacheOptions, ProfileSettings } from './profile-cache.ts';
