import type { Transaction } from 'kysely';
import type { Database } from '@herald/db';

/**
 * Pauses every job of a deleted profile, in the transaction that deletes it (deleteProfile): they
 * would start new turns for it. They stay listed, paused, with the reason.
 */
export async function pauseProfileJobs(trx: Transaction<Database>, profileId: string): Promise<void> {
  await trx.updateTable('cron_jobs').set({ enabled: false, paused_reason: 'profile deleted' }).where('profile_id', '=', profileId).execute();
}
