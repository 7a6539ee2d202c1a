/**
 * kill -9 of a real server around fires, then a restart on the same data: every due time
 * fired once and none lost (asserted on the fires and on the log), every action run.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import { type ServerProcess, startServer } from '../helpers/server.ts';
import { forEachStore } from '../helpers/stores.ts';
import { assertExactlyOnce, firesOf, schedules, sleep, waitForFires } from './live.ts';

forEachStore('scheduling: kill -9 of a server', (target) => {
  const dirs: string[] = [];
  const servers: ServerProcess[] = [];
  after(async () => {
    await Promise.allSettled(servers.map((s) => s.crash()));
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('around fires, then a restart: every due time fired once, none lost', { timeout: 120_000 }, async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'warren-sched-'));
    dirs.push(dataDir);
    const loc = target.location();
    const db = target.kind === 'sqlite' ? join(dataDir, 'warren.db') : `${loc.url}?schema=${loc.schema}`;
    const s1 = await startServer({ dataDir, db });
    servers.push(s1);
    const ids = await schedules(s1, 8);
    // Die mid-second, with fires of 8 schedules being logged and run around then.
    await sleep(2500 + Math.floor(Math.random() * 500));
    await s1.crash();
    await sleep(1500);
    const s2 = await startServer({ dataDir, db });
    servers.push(s2);
    // The downtime's fires (run-all) and the recovered ones come within a few seconds. Wait for
    // them before the check, which pauses every schedule first: checking too early froze a
    // schedule one fire short.
    await waitForFires(s2, ids, 5);
    try {
      await assertExactlyOnce(s2, ids, 5);
    } catch (error) {
      throw new Error(`${(error as Error).message}\n${s2.output().slice(-4000)}`);
    }
    // The actions ran (at least once each): every fire's message is in the room.
    const transcript = (
      await s2.api<{ messages: Array<{ text: string }> }>('GET', '/v1/streams/ops/transcript?limit=10000')
    ).json.messages;
    for (const [i, id] of ids.entries()) {
      const n = (await firesOf(s2, id)).length;
      const got = transcript.filter((m) => m.text === `s${i}`).length;
      assert.ok(got >= n, `s${i}: ${got} messages for ${n} fires`);
    }
    await s2.stop();
  });
});
