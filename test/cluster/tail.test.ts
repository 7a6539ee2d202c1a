import assert from 'node:assert/strict';
import { it } from 'node:test';
import { forEachStore } from '../helpers/stores.ts';
import { orderedFeed } from './feed.ts';

/**
 * The ordered feed, without servers: two stores on one schema stand for two nodes. This
 * node's commit is held back while an earlier commit of the other is unread, then both are
 * fanned out in seq order; with nothing missing, this node's commits pass at once.
 */
forEachStore(
  'cluster: ordered feed',
  (target) => {
    it("holds this node's commit behind an earlier one of another node, then passes both in order", async () => {
      const loc = target.location();
      const here = await target.open({ location: loc });
      const other = await target.open({ location: loc });
      // The tail is not started: nothing here reads the log until the test says so.
      const { tail, any, remote } = await orderedFeed(here);
      const ev = { zone: 'default', type: 'test.tick', actor: 'test', payload: {} };
      try {
        const [first] = await other.writer.append([ev]);
        const [second] = await here.writer.append([ev]);
        assert.equal(second!.seq, first!.seq + 1);
        assert.deepEqual(any, [], 'not before the other node’s earlier commit');
        tail.start(); // reads the log past its cursor (the poll is a minute: this is the read)
        const deadline = Date.now() + 10_000;
        while (any.length < 2 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
        assert.deepEqual(any, [first!.seq, second!.seq], 'both, in seq order');
        assert.deepEqual(remote, [first!.seq], 'only the other node’s is remote');
        // Nothing missing now: this node's next commit is fanned out as it commits.
        const [third] = await here.writer.append([ev]);
        assert.deepEqual(any, [first!.seq, second!.seq, third!.seq]);
      } finally {
        await tail.stop();
      }
      assert.equal(here.writer.orderedFanOut, false, 'the commit path fans out again once stopped');
    });
  },
  { backends: ['postgres'] },
);
