/** Two real servers on one PostgreSQL database: each schedule's every due time fires once. */
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import { type ServerProcess, startServer } from '../helpers/server.ts';
import { forEachStore } from '../helpers/stores.ts';
import { assertExactlyOnce, firedEvents, firesOf, schedules, waitForFires } from './live.ts';

forEachStore(
  'scheduling: two servers on one database',
  (target) => {
    const dirs: string[] = [];
    const servers: ServerProcess[] = [];
    after(async () => {
      await Promise.allSettled(servers.map((s) => s.crash()));
      for (const d of dirs) rmSync(d, { recursive: true, force: true });
    });
    const dir = () => {
      const d = mkdtempSync(join(tmpdir(), 'warren-sched-'));
      dirs.push(d);
      return d;
    };

    it('two servers fire each schedule once', { timeout: 120_000 }, async (t) => {
      const loc = target.location();
      const db = `${loc.url}?schema=${loc.schema}`;
      const aDir = dir();
      const a = await startServer({ dataDir: aDir, db });
      servers.push(a);
      // The operator key lives in the database: only the first server writes its file.
      const bDir = dir();
      copyFileSync(join(aDir, 'operator.key'), join(bDir, 'operator.key'));
      const b = await startServer({ dataDir: bDir, db });
      servers.push(b);
      const ids = await schedules(a, 20);
      await waitForFires(b, ids, 3);
      const total = await assertExactlyOnce(b, ids, 3);
      assert.equal((await firedEvents(a)).length, total);
      // Which server fired which is the row locks' and timers' business: under load one of them
      // can take every due time (B learns of A's schedules at its next wake). Exactly once is
      // the promise; who took part is reported, not required.
      const nodes = new Set<string>();
      for (const id of ids)
        for (const f of await firesOf(b, id)) if (f.node) nodes.add(f.node.split('.')[0]!);
      assert.ok(nodes.size >= 1, 'the fires name the server that ran them');
      t.diagnostic(`fired by ${[...nodes].join(', ')}`);
      await Promise.all([a.stop(), b.stop()]);
    });
  },
  { backends: ['postgres'] },
);
