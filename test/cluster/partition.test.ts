import assert from 'node:assert/strict';
import { after, it } from 'node:test';
import { within } from '../crash/harness.ts';
import { forEachStore, PG_URL } from '../helpers/stores.ts';
import { TcpProxy } from '../helpers/tcp-proxy.ts';
import { Cluster, echoes, FAST, spawnEcho } from './harness.ts';

/**
 * A node cut off from PostgreSQL without a reset (issue 26 item 2): a proxy in its path keeps
 * every socket open and forwards nothing (a new connection's TCP connect succeeds, then nothing
 * answers), so its statements hang rather than fail. Only its own clock can tell: its watchdog
 * fences it while still cut off — /healthz degraded, writes answered 503 `unavailable` with
 * Retry-After, its agents ended — not when the path heals (a failed lease call fences nothing
 * by itself). After, alone in its cluster (nobody took its sessions), it renews the same
 * epoch and serves again at once, its agent started again; it never exits.
 */
forEachStore(
  'cluster: a node cut off from its database fences itself on its own clock',
  (target) => {
    const clusters: Cluster[] = [];
    const proxies: TcpProxy[] = [];
    after(async () => {
      for (const c of clusters) await c.cleanup();
      for (const p of proxies) await p.close();
    });

    it('fences within the lease while blackholed, and serves again after', async () => {
      const { proxy, url } = await TcpProxy.forUrl(PG_URL);
      proxies.push(proxy);
      const c = new Cluster({ ...target.location(), url }, 1, {
        ...FAST,
        cluster: { ...FAST.cluster, mode: 'on' },
      });
      clusters.push(c);
      const [s] = await c.startAll();
      const node = c.nodes[0]!;
      const room = await s!.api<{ fd: number }>('POST', '/v1/streams', { name: 'cut', selfEcho: true });
      const g = await spawnEcho(s!, 'echo-cut');
      await s!.until(g.id, (x) => x.status === 'idle', 20_000);
      assert.equal(echoes(await node.marked()), 1);
      const epochOf = () =>
        c.withStore(async (store) =>
          Number(
            (
              await store.reader
                .selectFrom('nodes')
                .select('epoch')
                .where('id', '=', node.nodeId)
                .executeTakeFirstOrThrow()
            ).epoch,
          ),
        );
      const epochBefore = await epochOf();

      proxy.blackhole();
      const cutAt = Date.now();
      try {
        // Well inside twice the lease, while the path is still cut.
        await within(2 * FAST.cluster.leaseMs, 'fenced on its own clock', () =>
          /node fenced/.test(s!.output()),
        );
        console.log(`# blackholed: fenced after ${Date.now() - cutAt} ms (lease ${FAST.cluster.leaseMs} ms)`);
        const h = (await (await fetch(`${s!.url}/healthz`)).json()) as { ok: boolean; status?: string };
        assert.equal(h.ok, false);
        assert.equal(h.status, 'degraded');
        const res = await fetch(`${s!.url}/v1/fds/${room.fd}/write`, {
          method: 'POST',
          headers: { authorization: `Bearer ${s!.key}`, 'content-type': 'application/json' },
          body: JSON.stringify({ message: 'while cut' }),
          signal: AbortSignal.timeout(5000),
        });
        assert.equal(res.status, 503);
        assert.ok(Number(res.headers.get('retry-after')) > 0);
        assert.equal(((await res.json()) as { error: { code: string } }).error.code, 'unavailable');
        await within(10_000, 'its agent ended while cut off', async () => echoes(await node.marked()) === 0);
      } finally {
        proxy.forward();
      }
      await within(30_000, '/healthz ok again', async () => {
        const h = (await (await fetch(`${s!.url}/healthz`)).json()) as { ok: boolean };
        return h.ok;
      });
      const w = await s!.api<{ seq: number }>('POST', `/v1/fds/${room.fd}/write`, { message: 'after' });
      assert.ok(w.seq > 0);
      // Nobody took its epoch: the same lease, renewed, not a rejoin; its agent runs again.
      assert.equal(await epochOf(), epochBefore, 'serves again under the same epoch');
      assert.match(s!.output(), /the node serves again/);
      await within(20_000, 'its agent started again', async () => echoes(await node.marked()) === 1);
      assert.ok(s!.alive, s!.output().slice(-2000));
    });
  },
  { backends: ['postgres'] },
);
