import assert from 'node:assert/strict';
import { it } from 'node:test';
import pg from 'pg';
import { type Notice, readNotice } from '../../src/store/notice.ts';
import { forEachStore } from '../helpers/stores.ts';
import { orderedFeed } from './feed.ts';

const poll = async (what: string, ok: () => boolean) => {
  const deadline = Date.now() + 10_000;
  while (!ok()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
};

/**
 * What a commit's NOTIFY carries (store/notice.ts): the committed events as the log holds
 * them, when they fit, from both write paths; and the ordered feed passing another node's
 * events from a notice without reading the log — only when nothing is missing before them.
 */
forEachStore(
  'cluster: commit notices',
  (target) => {
    it('a notice carries the committed events as the log has them; a big batch only its seq', async () => {
      const loc = target.location();
      const store = await target.open({ location: loc });
      const channel = `warren_notice_${Math.random().toString(36).slice(2, 8)}`;
      const listener = new pg.Client({ connectionString: loc.url });
      const notices: Notice[] = [];
      listener.on('notification', (n) => {
        if (n.channel === channel) notices.push(readNotice(n.payload ?? '0'));
      });
      await listener.connect();
      try {
        await listener.query(`listen "${channel}"`);
        store.writer.notify = { channel, node: 'node-x' };
        // An append-only batch (the one-statement path) and a transaction (the two-statement one).
        await store.writer.append([
          { zone: 'default', type: 'test.a', actor: 'test', payload: { n: 1, s: 'é "q"' } },
          { zone: 'default', type: 'test.b', actor: 'test', session_id: null, stream_id: null },
        ]);
        await store.writer.write(async (tx) => {
          await tx.db.selectFrom('log_head').select('seq').execute();
          tx.append({ zone: 'default', type: 'test.c', actor: 'kernel', payload: { deep: { x: [1, 2] } } });
        });
        // Far past what a notification holds: the notice is only the seq.
        await store.writer.append([
          { zone: 'default', type: 'test.big', actor: 'test', payload: { blob: 'x'.repeat(9000) } },
        ]);
        await poll('three notices', () => notices.length === 3);
        const logged = await store.log.tail(0, { limit: 100 });
        const carried = notices.slice(0, 2).flatMap((n) => n.events ?? []);
        const want = logged.filter((e) => e.type.startsWith('test.') && e.type !== 'test.big');
        assert.deepEqual(carried, want, 'the events, exactly as the log has them');
        assert.ok(notices.slice(0, 2).every((n) => n.node === 'node-x'));
        assert.equal(notices[2]!.events, undefined, 'too big to carry');
        assert.equal(notices[2]!.seq, logged.at(-1)!.seq);
        assert.deepEqual(readNotice('42 {not json'), { seq: 42 }, 'a malformed body leaves the seq');
      } finally {
        store.writer.notify = undefined;
        await listener.end();
      }
    });

    it("passes another node's noticed events from memory, in order, only with nothing missing before them", async () => {
      const loc = target.location();
      const here = await target.open({ location: loc });
      const other = await target.open({ location: loc });
      here.writer.notify = { channel: 'unused', node: 'here' };
      // The tail is not started: nothing here reads the log until the test says so.
      const { tail, any, remote } = await orderedFeed(here);
      const ev = { zone: 'default', type: 'test.tick', actor: 'test', payload: {} };
      const noticeOf = async (n: number): Promise<Notice> => {
        const refs = await other.writer.append(Array.from({ length: n }, () => ev));
        const events = await other.log.tail(refs[0]!.seq - 1, { limit: n });
        return { seq: refs.at(-1)!.seq, node: 'other', events };
      };
      try {
        const first = await noticeOf(2);
        const second = await noticeOf(1);
        const third = await noticeOf(1);
        tail.notified(third);
        tail.notified({ ...second, events: [] }); // only the seq: the log would be read
        assert.equal(any.length, 0, 'the first commit is missing: nothing passes');
        tail.notified(first);
        const s = (n: Notice) => n.events!.map((e) => e.seq);
        assert.deepEqual(any, s(first), 'the first passes; the third waits behind the unread second');
        tail.notified(second);
        assert.deepEqual(any, [...s(first), ...s(second), ...s(third)], 'then both, in seq order');
        assert.deepEqual(remote, any, 'all of them remote');
        // This node's own notice is left to its commit path.
        const [mine] = await here.writer.append([ev]);
        tail.notified({ seq: mine!.seq, node: 'here', events: [] });
        assert.deepEqual(any.at(-1), mine!.seq);
        assert.equal(remote.includes(mine!.seq), false, 'its own commit is not remote');
      } finally {
        await tail.stop();
        here.writer.notify = undefined;
      }
    });
  },
  { backends: ['postgres'] },
);
