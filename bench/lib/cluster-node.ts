/**
 * One node of the cluster throughput bench, in a process of its own (its own event loop, as
 * a real node): opens a warren on the shared schema, creates a room and keeps `inFlight`
 * operator writes going for `ms`, then prints how many were acknowledged (one JSON line).
 *
 *   node --import tsx bench/lib/cluster-node.ts <db url> <node id> <ms> <inFlight> <start at epoch ms>
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Warren } from '../../src/syscalls/warren.ts';
import { operator } from '../../src/vocab/principal.ts';

const [db, nodeId, msText, inFlightText, startText] = process.argv.slice(2);
const ms = Number(msText);
const inFlight = Number(inFlightText);
const op = operator('bench');
const dir = mkdtempSync(join(tmpdir(), 'warren-bench-node-'));
const warren = await Warren.open({
  db: db!,
  dataDir: dir,
  metrics: false,
  kernel: { nodeId: nodeId!, resumeOnStart: false },
});
try {
  const { fd } = (await warren.call(op, 'streams_create', { name: `room-${nodeId}` })) as { fd: number };
  // Every node starts at the same moment, so their windows overlap.
  await new Promise((r) => setTimeout(r, Math.max(0, Number(startText) - Date.now())));
  const end = Date.now() + ms;
  let acked = 0;
  const lane = async () => {
    while (Date.now() < end) {
      await warren.call(op, 'ipc_write', { fd, message: 'x'.repeat(100) });
      acked++;
    }
  };
  await Promise.all(Array.from({ length: inFlight }, lane));
  process.stdout.write(`${JSON.stringify({ acked, ms })}\n`);
} finally {
  await warren.close();
  rmSync(dir, { recursive: true, force: true });
}
