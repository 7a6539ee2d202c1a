import assert from 'node:assert/strict';
import { it } from 'node:test';
import { operator } from '../../src/vocab/principal.ts';
import { idleAgent } from '../groups/helpers.ts';
import { forEachStore } from '../helpers/stores.ts';
import { until } from '../helpers/warrens.ts';
import { inProcessNodes } from './in-process.ts';

const op = operator('admin', 'default');

/**
 * A plugin's cache of what the log says follows every node's commits (`onAnyCommit`): routes
 * added through one node route inbound messages on another that had already compiled the
 * zone's routes.
 */
forEachStore(
  'cluster: plugin caches',
  (target) => {
    const node = inProcessNodes('pc');

    it("a route added on one node routes inbound on another that had the zone's routes compiled", async () => {
      const loc = target.location();
      const db = `${loc.url}?schema=${loc.schema}`;
      const a = await node(db, 'pc-a');
      const b = await node(db, 'pc-b');
      const inbound = {
        platform: 'telegram',
        room: 'r1',
        chat_jid: 'tg:r1',
        sender: 'alice',
        verb: 'message',
      };
      // B compiles the zone's routes (there are none yet).
      const before = (await b.call(op, 'groups_inbound', { ...inbound, text: 'early' })) as {
        routed: boolean;
      };
      assert.equal(before.routed, false);

      await a.call(op, 'register_group', { folder: 'ops', agent: idleAgent });
      await a.call(op, 'add_route', { seq: 1, match: 'platform=telegram', target: 'ops' });
      const routed = await until(
        async () => {
          const r = (await b.call(op, 'groups_inbound', { ...inbound, text: 'later' })) as {
            routed: boolean;
            group?: string;
          };
          return r.routed ? r : null;
        },
        20_000,
        "B routing by A's route",
      );
      assert.equal(routed.group, 'ops');
    });
  },
  { backends: ['postgres'] },
);
