import assert from 'node:assert/strict';
import { after, it } from 'node:test';
import pg from 'pg';
import { type Server, within } from '../crash/harness.ts';
import { assertAckedInLog } from '../helpers/log-checks.ts';
import { forEachStore, PG_URL } from '../helpers/stores.ts';
import { TcpProxy } from '../helpers/tcp-proxy.ts';
import { Cluster, FAST } from './harness.ts';

/**
 * A node outlives its database (issue 26): PostgreSQL ending its connections (an operator's
 * pg_terminate_backend, a restart) and the database unreachable for a while (a proxy in the
 * path refuses) end no `warren serve`, in a cluster of one (`--cluster auto`) or of two
 * (`--cluster on`). While unreachable a write answers 503 `unavailable` with Retry-After and
 * /healthz says degraded and why; after, writes work again and nothing acknowledged is lost.
 */

interface Answer {
  status: number;
  retryAfter: string | null;
  body: { seq?: number; error?: { code: string } };
}

async function write(s: Server, fd: number, message: string): Promise<Answer> {
  const res = await fetch(`${s.url}/v1/fds/${fd}/write`, {
    method: 'POST',
    headers: { authorization: `Bearer ${s.key}`, 'content-type': 'application/json' },
    body: JSON.stringify({ message }),
  }).catch((error) => {
    // No answer at all: the node died (the crash this file is about); say so, with its output.
    throw new Error(`no answer (${error}); alive: ${s.alive}\n${s.output().slice(-2000)}`);
  });
  return {
    status: res.status,
    retryAfter: res.headers.get('retry-after'),
    body: (await res.json()) as Answer['body'],
  };
}

async function health(s: Server): Promise<{ ok: boolean; status?: string; reason?: string }> {
  return (await fetch(`${s.url}/healthz`)).json() as Promise<{
    ok: boolean;
    status?: string;
    reason?: string;
  }>;
}

/** End every backend of these nodes (by the application_name warren gives them); how many. */
async function terminate(admin: pg.Client, nodeIds: readonly string[]): Promise<number> {
  const r = await admin.query<{ n: number }>(
    `select count(*)::int as n from (
       select pg_terminate_backend(pid) from pg_stat_activity
       where application_name = any($1) or application_name = any($2)) t`,
    [nodeIds.map((id) => `warren ${id}`), nodeIds.map((id) => `warren ${id} listen`)],
  );
  return r.rows[0]!.n;
}

/** Write until acknowledged (a write may meet a connection being ended: 503, retried). */
async function writeAcked(s: Server, fd: number, text: string, acked: Array<{ text: string; seq: number }>) {
  let last: Answer | undefined;
  await within(20_000, `${text} acknowledged (last: ${JSON.stringify(last)})`, async () => {
    last = await write(s, fd, text);
    if (last.status === 200) {
      acked.push({ text, seq: last.body.seq! });
      return true;
    }
    assert.equal(last.status, 503, `only 503 while connections come back: ${JSON.stringify(last)}`);
    assert.equal(last.body.error?.code, 'unavailable');
    assert.ok(last.retryAfter, 'a 503 says when to retry');
    return false;
  });
}

function assertAllAlive(servers: readonly Server[], when: string): void {
  servers.forEach((s, i) => {
    assert.ok(s.alive, `node ${i} is alive ${when}:\n${s.output().slice(-3000)}`);
    assert.doesNotMatch(
      s.output(),
      /Unhandled 'error' event|unhandledRejection|Uncaught/,
      `node ${i} ${when}`,
    );
  });
}

forEachStore(
  'cluster: a node outlives its database',
  (target) => {
    const clusters: Cluster[] = [];
    const proxies: TcpProxy[] = [];
    const admin = new pg.Client({ connectionString: PG_URL });
    admin.on('error', () => {});
    after(async () => {
      for (const c of clusters) await c.cleanup();
      for (const p of proxies) await p.close();
      await admin.end().catch(() => {});
    });

    const scenario = async (nodes: number, mode: 'auto' | 'on') => {
      if (clusters.length === 0) await admin.connect();
      const { proxy, url } = await TcpProxy.forUrl(PG_URL);
      proxies.push(proxy);
      const loc = target.location();
      const c = new Cluster({ ...loc, url }, nodes, { ...FAST, cluster: { ...FAST.cluster, mode } });
      clusters.push(c);
      const servers = await c.startAll();
      const ids = c.nodes.map((n) => n.nodeId);
      const first = servers[0]!;
      const room = await first.api<{ fd: number }>('POST', '/v1/streams', { name: 'outage', selfEcho: true });
      const acked: Array<{ text: string; seq: number }> = [];
      let k = 0;
      const writeEach = async () => {
        for (const s of servers) await writeAcked(s, room.fd, `m${k++}`, acked);
      };
      await writeEach();

      // PostgreSQL ends every connection of the nodes, again and again.
      for (let sweep = 0; sweep < 5; sweep++) {
        const ended = await terminate(admin, ids);
        assert.ok(ended > 0, `sweep ${sweep} ended some backends`);
        await writeEach();
        assertAllAlive(servers, `after sweep ${sweep}`);
      }

      // The database unreachable: writes answer 503 with Retry-After, /healthz says degraded.
      proxy.refuse();
      for (const s of servers) {
        await within(15_000, 'a write refused as unavailable', async () => {
          const r = await write(s, room.fd, 'during-outage');
          if (r.status === 200) return false; // committed before the cut reached this node
          assert.equal(r.status, 503, JSON.stringify(r));
          assert.equal(r.body.error?.code, 'unavailable');
          assert.ok(Number(r.retryAfter) > 0, 'Retry-After in seconds');
          return true;
        });
        await within(15_000, '/healthz degraded', async () => {
          const h = await health(s);
          return h.ok === false && h.status === 'degraded' && /database unreachable/.test(h.reason ?? '');
        });
      }
      // Longer than the lease: every node fences itself on its own clock (a cluster of one
      // too), and still lives through the failed renewals and reconnects.
      for (const s of servers)
        await within(15_000, 'fenced while the database is unreachable', async () =>
          /node fenced/.test((await health(s)).reason ?? ''),
        );
      assertAllAlive(servers, 'during the outage');

      // Back: healthy again, writes work, nothing acknowledged was lost.
      proxy.forward();
      for (const s of servers) await within(30_000, '/healthz ok again', async () => (await health(s)).ok);
      await writeEach();
      assertAllAlive(servers, 'after the outage');
      await c.withStore(async (store) => {
        await assertAckedInLog(store, acked);
        const rows = await store.reader
          .selectFrom('events')
          .select(['seq', 'payload'])
          .where('type', '=', 'stream.message')
          .orderBy('seq')
          .execute();
        const texts = rows
          .map((r) => JSON.parse(r.payload).text as string)
          .filter((t) => t !== 'during-outage');
        assert.deepEqual(
          texts,
          acked.map((a) => a.text),
          'every acknowledged message once, in order',
        );
      });
    };

    it('a single node (--cluster auto) survives terminated connections and an outage', () =>
      scenario(1, 'auto'));
    it('two nodes (--cluster on) survive terminated connections and an outage', () => scenario(2, 'on'));
  },
  { backends: ['postgres'] },
);
