import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import { Store } from '../../src/store/store.ts';
import { systemClock } from '../../src/util/clock.ts';
import { createIds } from '../../src/util/ids.ts';
import { assertGapFree } from '../helpers/log-checks.ts';
import { type ServerProcess, startServer } from '../helpers/server.ts';
import { forEachStore } from '../helpers/stores.ts';

type Msg = { seq: number; text: string };
type Ev = { seq: number; type: string; payload: { seqs?: number[] } };

/**
 * The durability promise, tested the hard way: a real server process takes a burst of
 * writes, is SIGKILLed in the middle, and restarts on the same data.
 */
forEachStore('kill -9 mid-burst', (target) => {
  const dirs: string[] = [];
  const servers: ServerProcess[] = [];
  after(async () => {
    await Promise.allSettled(servers.map((s) => s.crash()));
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('loses no acknowledged event, leaves no seq gap, keeps fds and cursors, delivers what was due', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'warren-crash-'));
    dirs.push(dataDir);
    const loc = target.location();
    const db = target.kind === 'sqlite' ? join(dataDir, 'warren.db') : `${loc.url}?schema=${loc.schema}`;

    const s1 = await startServer({ dataDir, db });
    servers.push(s1);
    const room = (
      await s1.api<{ fd: number; stream: { id: string } }>('POST', '/v1/streams', {
        name: 'burst',
        selfEcho: true,
      })
    ).json;
    const agent = (
      await s1.api<{ session: { id: string } }>('POST', '/v1/sessions', {
        title: 'listener',
        script: { steps: [{ listen: {} }] },
      })
    ).json.session.id;
    await s1.api('POST', '/v1/streams/burst/attach', { session: agent, mode: 'async' });
    // Move the operator's cursor past a first message, and let it be persisted.
    await s1.api('POST', `/v1/fds/${room.fd}/write`, { message: 'before' });
    const firstRead = (await s1.api<{ cursor: number }>('POST', `/v1/fds/${room.fd}/read`, {})).json;
    await new Promise((r) => setTimeout(r, 200));

    // The burst: 8 writers, each writing until the server dies.
    const acked: Msg[] = [];
    let crashed = false;
    const writer = async (w: number) => {
      for (let i = 0; ; i++) {
        const text = `w${w}-${i}`;
        try {
          const r = await s1.api<{ seq: number }>('POST', `/v1/fds/${room.fd}/write`, { message: text });
          if (r.status !== 200) throw new Error(`status ${r.status}`);
          acked.push({ seq: r.json.seq, text });
        } catch {
          if (crashed) return;
          throw new Error(`write failed before the crash`);
        }
      }
    };
    const writers = Array.from({ length: 8 }, (_, w) => writer(w));
    while (acked.length < 400) await new Promise((r) => setTimeout(r, 5));
    crashed = true;
    await s1.crash();
    await Promise.all(writers);
    assert.ok(acked.length >= 400);

    const s2 = await startServer({ dataDir, db });
    servers.push(s2);
    // Every acknowledged message is in the log, with the seq it was acknowledged with.
    const byText = new Map<string, number>();
    let before: number | undefined;
    for (;;) {
      const q = `/v1/streams/${room.stream.id}/transcript?limit=1000${before ? `&before=${before}` : ''}`;
      const page = (await s2.api<{ messages: Msg[] }>('GET', q)).json.messages;
      for (const m of page) byText.set(m.text, m.seq);
      if (page.length < 1000) break;
      before = page.at(-1)!.seq;
    }
    for (const a of acked) assert.equal(byText.get(a.text), a.seq, `acknowledged ${a.text} at seq ${a.seq}`);

    // fds and cursors survived: the operator's fd is there, its cursor no earlier than before.
    const fds = (
      await s2.api<{ fds: Array<{ fd: number; cursor: number; streamName: string }> }>('GET', '/v1/fds')
    ).json.fds;
    const mine = fds.find((f) => f.fd === room.fd);
    assert.ok(mine, 'operator fd on the room survived');
    assert.equal(mine.streamName, 'burst');
    assert.ok(mine.cursor >= firstRead.cursor);

    // What was due to the operator is still due: read it all.
    const got = new Set<number>();
    for (;;) {
      const r = (await s2.api<{ messages: Msg[] }>('POST', `/v1/fds/${room.fd}/read`, { limit: 1000 })).json;
      if (r.messages.length === 0) break;
      for (const m of r.messages) got.add(m.seq);
    }
    for (const a of acked)
      assert.ok(got.has(a.seq) || a.seq <= mine.cursor, `seq ${a.seq} delivered to the operator`);

    // The agent was resumed and got everything due to it (at least once, across both lives).
    const deadline = Date.now() + 20_000;
    let delivered = new Set<number>();
    while (Date.now() < deadline) {
      const evs = (await s2.api<{ events: Ev[] }>('GET', `/v1/sessions/${agent}/events?limit=10000`)).json
        .events;
      delivered = new Set(evs.filter((e) => e.type === 'session.input').flatMap((e) => e.payload.seqs ?? []));
      if (acked.every((a) => delivered.has(a.seq))) break;
      await new Promise((r) => setTimeout(r, 100));
    }
    const missing = acked.filter((a) => !delivered.has(a.seq));
    assert.equal(
      missing.length,
      0,
      `undelivered to the agent after restart: ${missing.slice(0, 5).map((m) => m.seq)}`,
    );
    await s2.stop();

    // seq has no gaps: 1..max, every one present.
    const store = await Store.open(
      target.kind === 'sqlite' ? { url: db, durability: 'process' } : { ...loc },
      systemClock,
      createIds(systemClock),
    );
    try {
      assert.equal(await store.log.head(), await assertGapFree(store));
    } finally {
      await store.close();
    }
  });
});
