import assert from 'node:assert/strict';
import { after, it } from 'node:test';
import { Warren } from '../../src/syscalls/warren.ts';
import { forEachStore } from '../helpers/stores.ts';
import { Cluster, FAST, readUntil, spawnEcho } from './harness.ts';

/**
 * Three nodes on one PostgreSQL schema: a pipe and a room whose ends are on different nodes.
 * A commit on one node reaches a reader blocked on another promptly (NOTIFY), and the
 * agent's input, written on a third node, reaches the node that runs it.
 */
forEachStore(
  'cluster: cross-node delivery',
  (target) => {
    const clusters: Cluster[] = [];
    after(async () => {
      for (const c of clusters) await c.cleanup();
    });

    it('a pipe and a room work whichever node each end is connected to', async () => {
      // No poll to fall back on within the test (60 s): what crosses nodes promptly, only a
      // NOTIFY carried it. A lost one shows as a read that times out, not as a slow one.
      const c = new Cluster(target.location(), 3, { ...FAST, cluster: { ...FAST.cluster, pollMs: 60_000 } });
      clusters.push(c);
      const [a, b, cc] = await c.startAll();

      const nodes = await c.withStore((s) => s.reader.selectFrom('nodes').selectAll().execute());
      assert.equal(nodes.filter((n) => n.state === 'live').length, 3, 'every node registered, live');

      // The agent runs on A; its input is sent through B; its reply is read through C.
      const echo = await spawnEcho(a!, 'echo-a');
      await a!.until(echo.id, (s) => s.status === 'idle');
      await b!.api('POST', `/v1/sessions/${echo.id}/send`, { text: 'ping-1' });
      const took = await readUntil(cc!, echo.pipeFd, 'echo:ping-1');
      console.log(`# pipe A→C with input through B: ${took} ms`);
      const owner = await c.withStore((s) =>
        s.reader
          .selectFrom('sessions')
          .select(['owner_node'])
          .where('id', '=', echo.id)
          .executeTakeFirstOrThrow(),
      );
      assert.equal(owner.owner_node, c.nodes[0]!.nodeId, 'owned by the node that started it');

      // A room: created on B, written on A, read (blocking) on C.
      const room = await b!.api<{ fd: number }>('POST', '/v1/streams', { name: 'x-room', selfEcho: true });
      const reading = cc!.api<{ messages: Array<{ text: string }>; timedOut?: boolean }>(
        'POST',
        `/v1/fds/${room.fd}/read`,
        { wait: true, waitMs: 5000 },
      );
      await new Promise((r) => setTimeout(r, 300));
      const t0 = Date.now();
      await a!.api('POST', `/v1/fds/${room.fd}/write`, { message: 'hello from A' });
      const got = await reading;
      // Woken within its 5 s wait with the message: with no poll inside the test, the NOTIFY
      // woke it (missed, the read would answer timedOut with nothing).
      assert.deepEqual(
        got.messages.map((m) => m.text),
        ['hello from A'],
      );
      assert.notEqual(got.timedOut, true);
      console.log(`# blocked read on C woken by a write on A in ${Date.now() - t0} ms`);

      // SSE on C follows what A commits, live (not only on replay).
      const ctl = new AbortController();
      const res = await fetch(`${cc!.url}/v1/events/live?type=stream.message`, {
        headers: { authorization: `Bearer ${cc!.key}` },
        signal: ctl.signal,
      });
      const sse = (async () => {
        const reader = res.body!.getReader();
        let text = '';
        for (;;) {
          const { value, done } = await reader.read();
          if (done) return text;
          text += new TextDecoder().decode(value);
          if (text.includes('sse from A')) return text;
        }
      })();
      await new Promise((r) => setTimeout(r, 300));
      const t1 = Date.now();
      await a!.api('POST', `/v1/fds/${room.fd}/write`, { message: 'sse from A' });
      const timer = setTimeout(() => ctl.abort(), 5000);
      const frames = await sse.catch(() => '');
      clearTimeout(timer);
      ctl.abort();
      assert.match(frames, /sse from A/, 'the live stream on C carried a commit made on A');
      console.log(`# SSE on C got A's commit in ${Date.now() - t1} ms`);

      // Waits work across nodes too: the child runs on A, the wait is on B.
      await cc!.api('POST', `/v1/sessions/${echo.id}/send`, { text: 'ping-2' });
      const w = await b!.api<{ status: string; timedOut: boolean }>('POST', '/v1/sessions/wait', {
        session: echo.id,
        waitMs: 8000,
      });
      assert.equal(w.timedOut, false, 'the wait on B saw the child on A go idle');
      assert.equal(w.status, 'idle');
      await readUntil(b!, echo.pipeFd, 'echo:ping-2');

      // A graceful kill through C is a SIGTERM the agent on A gets (not a SIGKILL for want
      // of a local agent): it ends its turn, is asked to finish, and ends `terminated`.
      const k = await cc!.api<{ signal: string }>('POST', `/v1/sessions/${echo.id}/kill`, { graceful: true });
      assert.equal(k.signal, 'SIGTERM');
      const end = await a!.until(echo.id, (s) => s.status === 'stopped', 15_000);
      assert.equal(end.endReason, 'terminated');
      const deadline = Date.now() + 5000;
      while ((await c.nodes[0]!.marked()).length > 0) {
        assert.ok(Date.now() < deadline, 'the agent process on A ended after a SIGTERM through C');
        await new Promise((r) => setTimeout(r, 50));
      }
    });
  },
  { backends: ['postgres'] },
);

forEachStore(
  'cluster: SQLite',
  (target) => {
    it('refuses to run as one of several nodes', async () => {
      const loc = target.location();
      await assert.rejects(
        Warren.open({ db: loc.url, cluster: { mode: 'on' }, metrics: false }),
        /several nodes need PostgreSQL/,
      );
    });
  },
  { backends: ['sqlite'] },
);
