import type { Kysely, Transaction } from 'kysely';
import type { Database } from '@herald/db';

/** What makes two jobs the same job to an import: whose it is, its name, its prompt and its schedule as written. */
export interface CronJobIdentity {
  profileId: string;
  creatorUserId: string;
  name: string;
  prompt: string;
  schedule: string;
}

/** The id of a job that is already this one (an import run twice adds nothing), if any. */
export async function findSameCronJob(db: Kysely<Database> | Transaction<Database>, job: CronJobIdentity): Promise<string | undefined> {
  const row = await db
    .selectFrom('cron_jobs')
    .select('id')
    .where('profile_id', '=', job.profileId)
    .where('creator_user_id', '=', job.creatorUserId)
    .where('name', '=', job.name)
    .where('prompt', '=', job.prompt)
    .where('schedule', '=', job.schedule)
    .executeTakeFirst();
  return row?.id;
}
