/** Schedules on real server processes, read back over REST (crash.test.ts, cluster.test.ts). */
import assert from 'node:assert/strict';

/** What these tests need of a server: its REST API (a second server on the same database shares the first's key). */
export interface Api {
  api<T = unknown>(method: string, path: string, body?: unknown): Promise<{ status: number; json: T }>;
}

export type Fire = { id: string; dueAt: number; status: string; manual: boolean; node: string | null };
export type Ev = { seq: number; payload: { scheduleId: string; fireId: string; dueAt: number } };
export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * Poll until each schedule has fired (on its own, not run by hand) at least `n` times, or the
 * deadline passes (the check that follows then says what is missing): a loaded machine runs
 * a schedule's fires late, never fewer — a fixed sleep would be a race.
 */
export async function waitForFires(s: Api, ids: string[], n: number, ms = 30_000): Promise<void> {
  const deadline = Date.now() + ms;
  for (;;) {
    const counts = await Promise.all(
      ids.map(async (id) => (await firesOf(s, id)).filter((f) => !f.manual).length),
    );
    if (counts.every((c) => c >= n) || Date.now() > deadline) return;
    await sleep(200);
  }
}

/** Create `n` one-second schedules (run-all after downtime) that write their name to room `ops`. */
export async function schedules(s: Api, n: number): Promise<string[]> {
  const room = await s.api('POST', '/v1/streams', { name: 'ops' });
  assert.equal(room.status, 200, JSON.stringify(room.json));
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const r = await s.api<{ schedule: { id: string } }>('POST', '/v1/schedules', {
      name: `s${i}`,
      intervalMs: 1000,
      missed: 'run-all',
      missedCap: 100,
      stream: { stream: 'ops', message: `s${i}` },
    });
    assert.equal(r.status, 200, JSON.stringify(r.json));
    ids.push(r.json.schedule.id);
  }
  return ids;
}

export const firesOf = async (s: Api, id: string): Promise<Fire[]> =>
  (await s.api<{ fires: Fire[] }>('GET', `/v1/schedules/${id}?fires=200`)).json.fires.reverse();

export const firedEvents = async (s: Api): Promise<Ev[]> =>
  (await s.api<{ events: Ev[] }>('GET', '/v1/events?type=schedule.fired&limit=10000')).json.events;

/** Each schedule's fires are its grid, once each: no double fire, no lost one; all done. */
export async function assertExactlyOnce(s: Api, ids: string[], minFires: number): Promise<number> {
  // Stop the clockwork first, and let the fires under way finish.
  for (const id of ids) assert.equal((await s.api('POST', `/v1/schedules/${id}/pause`)).status, 200);
  const deadline = Date.now() + 20_000;
  while (Date.now() < deadline) {
    const all = (await Promise.all(ids.map((id) => firesOf(s, id)))).flat();
    if (all.every((f) => f.status !== 'pending')) break;
    await sleep(100);
  }
  const events = await firedEvents(s);
  assert.equal(new Set(events.map((e) => e.payload.fireId)).size, events.length, 'one event per fire');
  let total = 0;
  for (const id of ids) {
    const fires = (await firesOf(s, id)).filter((f) => !f.manual);
    const dues = fires.map((f) => f.dueAt);
    assert.ok(dues.length >= minFires, `${id}: ${dues.length} fires, expected at least ${minFires}`);
    assert.equal(new Set(dues).size, dues.length, `${id}: a due time fired twice: ${dues}`);
    for (const [k, d] of dues.entries())
      assert.equal(d, dues[0]! + k * 1000, `${id}: a fire lost before ${d}`);
    for (const f of fires)
      assert.equal(f.status, 'ok', `${id}: fire ${f.id} is ${f.status}: ${JSON.stringify(fires)}`);
    const logged = events.filter((e) => e.payload.scheduleId === id).map((e) => e.payload.dueAt);
    assert.deepEqual(logged.sort(), [...dues].sort(), `${id}: the log holds each fire once`);
    total += fires.length;
  }
  return total;
}
