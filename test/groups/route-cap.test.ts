/**
 * The route cap (issue 25; docs/decisions.md, "Standing objects"): a group may hold at most
 * `plugins.groups.maxRoutesPerGroup` routes (default 100) targeting its subtree, counted when
 * a group actor (its socket, or an operator acting as it) adds or sets them. Operators are not
 * capped.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { call, forEachWarren } from '../helpers/warrens.ts';
import { type Any, dataDir, errorOf, socketClient, socketOf, start, tree } from './helpers.ts';

const routes = (n: number, from = 0) =>
  Array.from({ length: n }, (_, i) => ({ seq: from + i, match: `room=r${from + i}`, target: 'main/a' }));

forEachWarren('groups: the route cap', (t) => {
  it('a group actor adding route 101 is refused with a clear error; operators are not capped', async () => {
    const dir = dataDir();
    const w = await t.open({ plugins: { config: { groups: { dataDir: dir } } } });
    await tree(w);
    await start(w, dir, 'main/a');
    const world = await socketClient(socketOf(dir, 'main/a'));
    const count = async () => (await call(w, 'list_routes', { group: 'main/a' })).routes.length as number;

    // Up to the cap: 100 routes in one set, as the group itself.
    assert.equal(
      errorOf(await world.callTool({ name: 'set_routes', arguments: { routes: routes(100) } })),
      null,
    );
    assert.equal(await count(), 100);

    // The 101st, by add or by set, through the socket or by an operator acting as the group.
    const add = errorOf(
      await world.callTool({
        name: 'add_route',
        arguments: { seq: 100, match: 'room=r100', target: 'main/a' },
      }),
    );
    assert.equal(add?.code, 'limit_exceeded', JSON.stringify(add));
    assert.match(
      add!.message,
      /^group main\/a may hold at most 100 routes \(plugins\.groups\.maxRoutesPerGroup\); it would hold 101$/,
    );
    const set = errorOf(await world.callTool({ name: 'set_routes', arguments: { routes: routes(101) } }));
    assert.equal(set?.code, 'limit_exceeded');
    await assert.rejects(
      call(w, 'add_route', { seq: 100, match: 'room=r100', target: 'main/a', group: 'main/a' }),
      {
        code: 'limit_exceeded',
        details: { limit: 'maxRoutesPerGroup', max: 100 },
      },
    );
    assert.equal(await count(), 100, 'nothing refused was stored');

    // An operator (acting as no group) adds past it.
    for (const r of routes(5, 100)) await call(w, 'add_route', r);
    assert.equal(await count(), 105);
    const added = (await call(w, 'events', { type: 'group.route_added', limit: 100 })).events as Any[];
    assert.equal(added.filter((e) => e.actor === 'operator:admin').length, 5);
  });
});
