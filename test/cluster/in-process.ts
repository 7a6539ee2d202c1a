import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import type { ClusterConfig } from '../../src/cluster/config.ts';
import { Warren } from '../../src/syscalls/warren.ts';

/** Opens a node (`db`: the schema's URL); `close` ends one before the suite does. */
export interface InProcessNodes {
  (db: string, id: string): Promise<Warren>;
  close(w: Warren): Promise<void>;
}

/**
 * Nodes of one cluster in the test's own process, on one PostgreSQL schema (`db`), closed
 * after the suite. By default no heartbeat runs during a test, so the lease outlasts it: a
 * lease that ran out while a slow test ran made the other node take the first one's sessions
 * as a lost node's (and the first fence itself). A test of the lease itself gives its own
 * `cluster` timing.
 */
export function inProcessNodes(
  prefix: string,
  cluster: Partial<ClusterConfig> = { leaseMs: 300_000, heartbeatMs: 60_000, pollMs: 100 },
): InProcessNodes {
  const open = new Set<Warren>();
  const dirs: string[] = [];
  after(async () => {
    for (const w of open) await w.close();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });
  const node = async (db: string, id: string) => {
    const root = mkdtempSync(join(tmpdir(), `warren-cluster-${prefix}-`));
    dirs.push(root);
    const w = await Warren.open({
      db,
      // A dir inside the root: what goes beside the data dir (the groups' `data-groups`) goes too.
      dataDir: join(root, 'data'),
      metrics: false,
      kernel: { nodeId: id, reconcileIntervalMs: 60_000 },
      cluster,
    });
    open.add(w);
    return w;
  };
  const close = async (w: Warren) => {
    if (open.delete(w)) await w.close();
  };
  return Object.assign(node, { close });
}
