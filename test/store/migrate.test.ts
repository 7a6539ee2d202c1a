/**
 * The migration runner: a current store skips Kysely's migrator, anything else still goes
 * through it (new steps run once, a history it does not know is refused), two opens of one
 * fresh schema at once both succeed, and introspection sees only the store's own schema.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { type Migration, sql } from 'kysely';
import { migrations } from '../../src/store/migrations/index.ts';
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
    const location = target.location();
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
});
