import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { Warren } from '../../src/syscalls/warren.ts';
import { operator } from '../../src/vocab/principal.ts';
import { forEachStore } from '../helpers/stores.ts';
import { inProcessNodes } from './in-process.ts';

/**
 * Two nodes in one process on one PostgreSQL schema, both writing to a room an agent on one
 * of them reads: this node's commits must not overtake another's it has not read yet.
 */
forEachStore(
  'cluster: ordered fan-out',
  (target) => {
    const node = inProcessNodes('ord');

    it('an agent gets every message of a room written from two nodes at once, in seq order', async () => {
      const loc = target.location();
      const db = `${loc.url}?schema=${loc.schema}`;
      const a = await node(db, 'ord-a');
      const b = await node(db, 'ord-b');
      const op = operator();
      const r = (await a.call(op, 'ipc_spawn', { script: { steps: [{ listen: {} }] } })) as {
        session: { id: string };
      };
      const id = r.session.id;
      const room = (await a.call(op, 'streams_create', { name: 'two-writers' })) as { fd: number };
      await a.call(op, 'streams_attach', { session: id, stream: 'two-writers', mode: 'async' });
      await new Promise((r) => setTimeout(r, 300)); // B has seen the room's fd
      const written: number[] = [];
      const writer = async (w: Warren, tag: string) => {
        for (let i = 0; i < 60; i++) {
          const out = (await w.call(op, 'ipc_write', { fd: room.fd, message: `${tag}${i}` })) as {
            seq: number;
          };
          written.push(out.seq);
        }
      };
      // Interleaved: A's own commits must not overtake B's it has not read yet.
      await Promise.all([writer(a, 'a'), writer(b, 'b'), writer(b, 'c')]);
      const deadline = Date.now() + 20_000;
      let got: number[] = [];
      for (;;) {
        const evs = (await a.call(op, 'session_events', { id, limit: 10_000 })) as {
          events: Array<{ type: string; payload: { seqs?: number[] } }>;
        };
        got = evs.events.filter((e) => e.type === 'session.input').flatMap((e) => e.payload.seqs ?? []);
        if (got.length >= written.length || Date.now() > deadline) break;
        await new Promise((r) => setTimeout(r, 100));
      }
      assert.deepEqual(
        [...new Set(got)].sort((x, y) => x - y),
        [...written].sort((x, y) => x - y),
        'every message, whichever node wrote it',
      );
      assert.deepEqual(
        got,
        [...got].sort((x, y) => x - y),
        'handed over in seq order',
      );
    });
  },
  { backends: ['postgres'] },
);
