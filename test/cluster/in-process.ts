import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after } from 'node:test';
import { Warren } from '../../src/syscalls/warren.ts';

/**
 * Nodes of one cluster in the test's own process, on one PostgreSQL schema (`db`), closed
 * after the suite. No heartbeat runs during a test, so the lease outlasts it: a lease that ran
 * out while a slow test ran made the other node take the first one's sessions as a lost
 * node's (and the first fence itself).
 */
export function inProcessNodes(prefix: string): (db: string, id: string) => Promise<Warren> {
  const open: Warren[] = [];
  const dirs: string[] = [];
  after(async () => {
    for (const w of open) await w.close();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });
  return async (db, id) => {
    const root = mkdtempSync(join(tmpdir(), `warren-cluster-${prefix}-`));
    dirs.push(root);
    const w = await Warren.open({
      db,
      // A dir inside the root: what goes beside the data dir (the groups' `data-groups`) goes too.
      dataDir: join(root, 'data'),
      metrics: false,
      kernel: { nodeId: id, reconcileIntervalMs: 60_000 },
      cluster: { leaseMs: 300_000, heartbeatMs: 60_000, pollMs: 100 },
    });
    open.push(w);
    return w;
  };
}
