import { after } from 'node:test';
import type { Server } from '../crash/harness.ts';
import { PG_URL, type StoreTarget } from '../helpers/stores.ts';
import { TcpProxy } from '../helpers/tcp-proxy.ts';
import { Cluster, FAST } from './harness.ts';

export interface ProxiedPair {
  cluster: Cluster;
  /** Between the proxied nodes and PostgreSQL: the test blackholes, refuses and heals it. */
  proxy: TcpProxy;
  /** Node 0 and node 1, listening. */
  servers: [Server, Server];
  schema: string;
}

/**
 * Two cluster nodes (mode on, FAST leases) on a fresh schema of `target`; the nodes listed in
 * `proxied` reach PostgreSQL through one TcpProxy the test controls, the others directly. Call
 * it in a suite's body: it registers the `after` that closes every proxy and kills every
 * process the pairs started, failed test or not, and returns what makes a pair.
 */
export function proxiedPairs(target: StoreTarget): (proxied: readonly number[]) => Promise<ProxiedPair> {
  const clusters: Cluster[] = [];
  const proxies: TcpProxy[] = [];
  after(async () => {
    for (const p of proxies) await p.close();
    for (const c of clusters) await c.cleanup();
  });
  return async (proxied) => {
    const loc = target.location();
    await target.prepare(loc);
    const { proxy, url } = await TcpProxy.forUrl(PG_URL);
    proxies.push(proxy);
    const cluster = new Cluster(loc, 2, { ...FAST, cluster: { ...FAST.cluster, mode: 'on' } });
    clusters.push(cluster);
    // One after the other: the first makes the operator key.
    const a = await cluster.start(0, proxied.includes(0) ? url : undefined);
    const b = await cluster.start(1, proxied.includes(1) ? url : undefined);
    return { cluster, proxy, servers: [a, b], schema: loc.schema as string };
  };
}
