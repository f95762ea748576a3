import { afterEach, describe, expect, it } from 'vitest';
import { sql } from 'kysely';
import type { KyselyPlugin } from 'kysely';
import { PROFILE_CACHE_APPLICATION_NAME, ProfileCache } from '@herald/db';
import type { Db } from '@herald/db';
import { useTestDatabase } from '../../../test/support/use-test-database.ts';
import { countQueries } from '../../../test/support/db-probes.ts';
import { gate, waitFor } from '../../../test/support/wait.ts';

const HOOK = { name: 'audit', event: 'post_tool_call', url: 'https://siem.example.com/in' };
const RULE = { platform: 'api', mode: 'idle', idle_minutes: 30 };

/** A write whose notice never goes out: what a change made while no one listened looks like. */
async function writeUnannounced(db: Db, hooks: unknown[]): Promise<void> {
  await db.transaction().execute(async (trx) => {
    // Triggers do not fire in replica mode, so herald_profile_changed stays silent.
    await sql`SET LOCAL session_replication_role = replica`.execute(trx);
    await sql`UPDATE profile_hooks SET hooks = ${JSON.stringify(hooks)}::jsonb WHERE profile_id = 'main'`.execute(trx);
  });
}

describe('the profile cache', () => {
  const database = useTestDatabase();
  const caches: ProfileCache[] = [];
  afterEach(async () => {
    await Promise.all(caches.splice(0).map((cache) => cache.stop()));
    await database.db.deleteFrom('profile_hooks').execute();
    await database.db.updateTable('profiles').set({ session_reset: '[]' }).where('id', '=', 'main').execute();
  });
  /** A cache counting its reads of profiles; the test's own writes are not counted. */
  const openCache = async (url = database.url) => {
    const counted = countQueries(database.db, 'profiles');
    const cache = new ProfileCache({ db: counted.db, url });
    caches.push(cache);
    await cache.start();
    return { cache, reads: counted.count };
  };

  it('reads a profile once, then sees a change another connection commits, hooks and reset rules alike', async () => {
    const { cache, reads } = await openCache();
    expect(cache.listening).toBe(true);
    expect(await cache.get('main')).toEqual({ hooks: [], sessionReset: [], model: null });
    expect(await cache.get('main')).toEqual({ hooks: [], sessionReset: [], model: null });
    expect(reads()).toBe(1);
    await database.db
      .insertInto('profile_hooks')
      .values({ profile_id: 'main', hooks: JSON.stringify([HOOK]) })
      .execute();
    await waitFor(async () => cache.cached('main') === undefined, { what: 'the notice of the hooks change' });
    expect((await cache.get('main')).hooks).toEqual([HOOK]);
    await database.db
      .updateTable('profiles')
      .set({ session_reset: JSON.stringify([RULE]) })
      .where('id', '=', 'main')
      .execute();
    await waitFor(async () => cache.cached('main') === undefined, { what: 'the notice of the reset rules change' });
    expect(await cache.get('main')).toEqual({ hooks: [HOOK], sessionReset: [RULE], model: null });
    await database.db.deleteFrom('profile_hooks').where('profile_id', '=', 'main').execute();
    await waitFor(async () => cache.cached('main') === undefined, { what: 'the notice of the deletion' });
    expect((await cache.get('main')).hooks).toEqual([]);
    expect(reads()).toBe(4);
  });

  it("sees a change of a profile's models another connection commits (the worker's model chains follow it)", async () => {
    const { cache } = await openCache();
    expect((await cache.get('main')).model).toBeNull();
    await database.db
      .updateTable('profiles')
      .set({ model: JSON.stringify({ primary: 'openai/gpt-x' }) })
      .where('id', '=', 'main')
      .execute();
    await waitFor(async () => cache.cached('main') === undefined, { what: 'the notice of the model change' });
    expect((await cache.get('main')).model).toEqual({ primary: 'openai/gpt-x' });
  });

  it('trusts nothing while its listener cannot connect: every read goes to Postgres', async () => {
    const unreachable = new URL(database.url);
    unreachable.port = '1';
    const { cache, reads } = await openCache(unreachable.toString());
    expect(cache.listening).toBe(false);
    await database.db.insertInto('profile_hooks').values({ profile_id: 'main', hooks: '[]' }).execute();
    expect((await cache.get('main')).hooks).toEqual([]);
    await writeUnannounced(database.db, [HOOK]);
    expect((await cache.get('main')).hooks).toEqual([HOOK]);
    expect(reads()).toBe(2);
  });

  it('starts empty on every reconnect of its listener, so a change it could not hear is still seen', async () => {
    await database.db.insertInto('profile_hooks').values({ profile_id: 'main', hooks: '[]' }).execute();
    const { cache } = await openCache();
    await cache.get('main');
    expect(cache.cached('main')).toBeDefined();
    await writeUnannounced(database.db, [HOOK]);
    // Unannounced, the change is invisible to a live listener: the copy is what the cache answers.
    expect((await cache.get('main')).hooks).toEqual([]);
    const listener = () =>
      sql<{ pid: number }>`
      SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND application_name = ${PROFILE_CACHE_APPLICATION_NAME}`.execute(database.db);
    const [before] = (await listener()).rows;
    expect(before).toBeDefined();
    await sql`SELECT pg_terminate_backend(${before!.pid})`.execute(database.db);
    await waitFor(async () => cache.listening && (await listener()).rows.some((row) => row.pid !== before!.pid), { what: 'the listener back on a new connection' });
    expect((await cache.get('main')).hooks).toEqual([HOOK]);
  });

  /** A cache whose reads of Postgres finish only when the test opens the gate. */
  const heldCache = () => {
    const held = gate();
    const reached = gate();
    const plugin: KyselyPlugin = {
      transformQuery: (args) => args.node,
      transformResult: async (args) => {
        reached.open();
        await held.opened;
        return args.result;
      },
    };
    const cache = new ProfileCache({ db: database.db.withPlugin(plugin), url: database.url });
    caches.push(cache);
    return { cache, reached: reached.opened, release: held.open };
  };

  it('keeps nothing from a read that an invalidation overtook', async () => {
    await database.db.insertInto('profile_hooks').values({ profile_id: 'main', hooks: '[]' }).execute();
    const { cache, reached, release } = heldCache();
    await cache.start();
    const read = cache.get('main');
    await reached;
    cache.invalidate('main');
    release();
    expect((await read).hooks).toEqual([]);
    expect(cache.cached('main')).toBeUndefined();
  });

  it('keeps nothing from a read begun before its listener was live', async () => {
    await database.db.insertInto('profile_hooks').values({ profile_id: 'main', hooks: '[]' }).execute();
    const { cache, reached, release } = heldCache();
    const read = cache.get('main');
    await reached;
    // A change committed now, before the LISTEN, is never announced to this cache.
    await writeUnannounced(database.db, [HOOK]);
    await cache.start();
    expect(cache.listening).toBe(true);
    release();
    expect((await read).hooks).toEqual([]);
    expect(cache.cached('main')).toBeUndefined();
    expect((await cache.get('main')).hooks).toEqual([HOOK]);
  });
});
