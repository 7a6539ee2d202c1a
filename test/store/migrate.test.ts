/**
 * Migration histories: a store whose every migration is recorded opens without running the
 * Migrator (src/store/store.ts `upToDate`); anything else still goes through it.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { type Kysely, type Migration, sql } from 'kysely';
import { forEachStore } from '../helpers/stores.ts';

/** A plugin's steps that count how often each ran. */
function countedSteps(names: string[], runs: Map<string, number>): Record<string, Migration> {
  return Object.fromEntries(
    names.map((name) => [
      name,
      {
        async up(db: Kysely<unknown>) {
          runs.set(name, (runs.get(name) ?? 0) + 1);
          await db.schema
            .createTable(`probe_${name}`)
            .addColumn('id', 'text', (c) => c.primaryKey())
            .execute();
        },
      },
    ]),
  );
}

forEachStore('store: migration histories', (target) => {
  it('runs each step once: nothing when all are recorded, only the new one when one is added', async () => {
    const location = target.location();
    const runs = new Map<string, number>();
    const first = await target.open({ location });
    await first.migratePlugin('probe', countedSteps(['001_a'], runs));
    await first.migratePlugin('probe', countedSteps(['001_a'], runs));
    await first.close();

    const second = await target.open({ location });
    await second.migratePlugin('probe', countedSteps(['001_a', '002_b'], runs));
    assert.deepEqual(Object.fromEntries(runs), { '001_a': 1, '002_b': 1 });
    const names = await sql<{ name: string }>`select name from plugin_migrations_probe order by name`.execute(
      second.reader,
    );
    assert.deepEqual(
      names.rows.map((r) => r.name),
      ['001_a', '002_b'],
    );
    await sql`select id from probe_002_b`.execute(second.reader);
  });

  it('refuses a history that records a step the code does not have', async () => {
    const location = target.location();
    const store = await target.open({ location });
    await store.migratePlugin('probe', countedSteps(['001_a', '002_b'], new Map()));
    // Same number of names as the code's steps, one of them unknown: not "up to date".
    await sql`update plugin_migrations_probe set name = '002_gone' where name = '002_b'`.execute(
      store.reader,
    );
    await assert.rejects(
      store.migratePlugin('probe', countedSteps(['001_a', '002_b'], new Map())),
      /corrupted migrations/,
    );
  });
});
