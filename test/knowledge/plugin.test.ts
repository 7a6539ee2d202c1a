import assert from 'node:assert/strict';
import { it } from 'node:test';
import { call, forEachWarren } from '../helpers/warrens.ts';
import { fails } from '../orchestration/helpers.ts';

/** The knowledge plugin as a plugin: on by default, never the reason a server fails to start. */
forEachWarren('knowledge plugin', (t) => {
  it('loads by default, after orchestration', async () => {
    const w = await t.open();
    const names = w.plugins.loaded.map((p) => p.name);
    assert.ok(names.includes('knowledge'), names.join(', '));
    assert.ok(names.indexOf('orchestration') < names.indexOf('knowledge'), names.join(', '));
  });

  it('new to a database whose orchestration is disabled: starts disabled, the server starts', async () => {
    const location = t.location();
    const first = await t.open({ location });
    // Every optional plugin off, dependants before what they depend on (reverse load order).
    for (const p of first.plugins.loaded.map((l) => l.name).reverse()) {
      if (p !== 'core') await call(first, 'plugin_disable', { name: p });
    }
    // As if this database predated the knowledge plugin.
    await first.store.writer.write(async (tx) => {
      await tx.db.deleteFrom('plugins').where('name', '=', 'knowledge').execute();
    });
    await first.close();

    const w = await t.open({ location });
    assert.deepEqual(
      w.plugins.loaded.map((p) => p.name),
      ['core'],
    );
    await fails(call(w, 'knowledge_search', { query: 'x' }), 'not_found', /knowledge plugin/);
    const rows = (await call(w, 'plugin_list', {})).plugins as Array<{ name: string; enabled: boolean }>;
    assert.equal(rows.find((p) => p.name === 'knowledge')?.enabled, false);
  });
});
