import assert from 'node:assert/strict';
import { it } from 'node:test';
import { operator } from '../../src/vocab/principal.ts';
import { forEachStore } from '../helpers/stores.ts';
import { inProcessNodes } from './in-process.ts';

/**
 * Two nodes on one schema give one holder fds at the same moment: each node's writer is
 * serial, but two nodes' transactions both read the same highest fd number. Every one
 * succeeds, with a number of its own (found by the cluster bench: a room created on each of
 * three nodes at once failed with a duplicate fd number).
 */
forEachStore(
  'cluster: fd numbers',
  (target) => {
    const node = inProcessNodes('fdn');

    it('one holder gets distinct fd numbers from two nodes at once', async () => {
      const loc = target.location();
      const db = `${loc.url}?schema=${loc.schema}`;
      const a = await node(db, 'fdn-a');
      const b = await node(db, 'fdn-b');
      const op = operator('racer');
      const make = (w: typeof a, tag: string) =>
        Array.from(
          { length: 12 },
          (_, i) => w.call(op, 'streams_create', { name: `${tag}-${i}` }) as Promise<{ fd: number }>,
        );
      const got = await Promise.allSettled([...make(a, 'a'), ...make(b, 'b')]);
      const failed = got.filter((r) => r.status === 'rejected').map((r) => String(r.reason));
      assert.deepEqual(failed, [], 'every create succeeded');
      const fds = got.map((r) => (r as PromiseFulfilledResult<{ fd: number }>).value.fd);
      assert.equal(new Set(fds).size, fds.length, `distinct fds: ${fds.join(',')}`);
    });
  },
  { backends: ['postgres'] },
);
