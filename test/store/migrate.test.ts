/**
 * The migration runner: a current store skips Kysely's migrator, anything else still goes
 * through it (new steps run once, a history it does not know is refused), two opens of one
 * fresh schema at once both succeed, and introspection sees only the store's own schema. A
 * set that renames a table made by its first step: a fresh database gets the new name from
 * that step and renames nothing; one made before the rename gets there by it.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { type Migration, sql } from 'kysely';
import { migrations } from '../../src/store/migrations/index.ts';
import { nameBeforeRename, renameOld } from '../../src/store/renames.ts';
import type { Store } from '../../src/store/store.ts';
import { forEachStore } from '../helpers/stores.ts';

/** A step that creates a table, so running it twice would fail. */
const creates = (table: string): Migration => ({
  up: async (db) => {
    await db.schema
      .createTable(table)
      .addColumn('id', 'text', (c) => c.primaryKey())
      .execute();
  },
});

forEachStore('store: migration runner', (target) => {
  it('a plugin set that grows runs only its new step; a history with an unknown step is refused', async () => {
    const store = await target.open();
    await store.migratePlugin('probe', { '001_a': creates('probe_a') });
    // Current: nothing runs again (a second run of 001_a would fail on its table).
    await store.migratePlugin('probe', { '001_a': creates('probe_a') });
    await store.migratePlugin('probe', { '001_a': creates('probe_a'), '002_b': creates('probe_b') });
    const names = await sql<{ name: string }>`select name from plugin_migrations_probe`.execute(store.reader);
    assert.deepEqual(names.rows.map((r) => r.name).sort(), ['001_a', '002_b']);
    await store.reader
      .selectFrom('probe_b' as never)
      .selectAll()
      .execute();
    await assert.rejects(
      store.migratePlugin('probe', { '001_a': creates('probe_a') }),
      /previously executed migration 002_b is missing/,
    );
  });

  // PostgreSQL: several nodes share one schema. A SQLite file belongs to one node.
  const oneNode = target.kind === 'sqlite' ? 'a SQLite file is opened by one node' : false;
  it('two stores opening one fresh location at once both come up, each step run once', {
    skip: oneNode,
  }, async () => {
    // Not cloned from the template: both stores run the migrations themselves, at once.
    const location = target.location('process', { migrated: false });
    const [a, b] = await Promise.all([target.open({ location }), target.open({ location })]);
    const names = await sql<{ name: string }>`select name from kysely_migration`.execute(a.reader);
    assert.deepEqual(
      names.rows.map((r) => r.name).sort(),
      Object.keys(await migrations(a.kind).getMigrations()).sort(),
    );
    await a.writer.append([{ zone: 'z', type: 't', actor: 'kernel', session_id: null, payload: {} }]);
    assert.equal(await b.log.head(), 1);
  });

  it("introspection sees the store's own tables, and only those", async () => {
    const a = await target.open();
    const b = await target.open();
    await b.migratePlugin('only_b', { '001': creates('only_in_b') });
    const tables = (await a.reader.introspection.getTables({ withInternalKyselyTables: true })).map(
      (t) => t.name,
    );
    assert.ok(tables.includes('events') && tables.includes('kysely_migration'), tables.join(', '));
    assert.ok(!tables.includes('only_in_b'), 'a table of another schema is not ours');
    const events = (await a.reader.introspection.getTables()).find((t) => t.name === 'events');
    assert.ok(events?.columns.some((c) => c.name === 'seq'));
    assert.ok(!(await a.reader.introspection.getTables()).some((t) => t.name === 'kysely_migration'));
  });

  it('a rename: a fresh set makes the new name at once, an old database is renamed, both end alike', async () => {
    const pair = ['probe_first', 'probe_now'] as const;
    // The set as it ships now: 001 makes the table under its current name; 002, written when
    // the table had its first name, indexes whichever name it has; 003 renames an old one.
    const set = (kind: Store['kind']): Record<string, Migration> => ({
      '001_make': creates('probe_now'),
      '002_index': {
        up: async (db) => {
          const table = await nameBeforeRename(db, kind, pair);
          await db.schema.createIndex('probe_first_id').on(table).column('id').execute();
        },
      },
      '003_rename': {
        up: async (db) => {
          await renameOld(db, kind, [pair]);
        },
      },
    });
    const fresh = await target.open();
    await fresh.migratePlugin('probe', set(fresh.kind));
    // A database from before: its 001 made the first name (and it held a row), nothing else ran.
    const old = await target.open();
    await old.migratePlugin('probe', { '001_make': creates('probe_first') });
    await old.writer.write(async (tx) => {
      await sql`insert into probe_first (id) values ('kept')`.execute(tx.db);
    });
    await old.migratePlugin('probe', set(old.kind));
    for (const store of [fresh, old])
      await assert.rejects(sql`select 1 from probe_first`.execute(store.reader), /probe_first/);
    assert.deepEqual(
      (await sql<{ id: string }>`select id from probe_now`.execute(old.reader)).rows.map((r) => r.id),
      ['kept'],
    );
    const indexes = async (store: Store) =>
      store.kind === 'sqlite'
        ? (
            await sql<{
              name: string;
            }>`select name from pragma_index_list('probe_now') where origin = 'c'`.execute(store.reader)
          ).rows.map((r) => r.name)
        : (
            await sql<{ name: string }>`select indexname as name from pg_indexes
            where schemaname = current_schema() and tablename = 'probe_now' and indexname = 'probe_first_id'`.execute(
              store.reader,
            )
          ).rows.map((r) => r.name);
    assert.deepEqual(await indexes(fresh), ['probe_first_id']);
    assert.deepEqual(await indexes(old), ['probe_first_id']);
  });
});
