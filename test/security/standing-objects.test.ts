import assert from 'node:assert/strict';
import { it } from 'node:test';
import { type HttpWarren, startHttp } from '../helpers/http.ts';
import { deepTrees, forEachWarren, idleScript, waitStatus } from '../helpers/warrens.ts';

/**
 * Issue 25's attack: one depth-1 session created 500 one-second schedules; after it was killed
 * they kept logging about 1,000 events/s. Now a session's schedules are capped (count and
 * period), disabled when it is killed, and passed to its parent when it ends on its own.
 */

type Sched = { id: string; enabled: boolean; createdBy: string; fires: number };

async function spawn(h: HttpWarren, auth: string, body: Record<string, unknown> = {}): Promise<string> {
  // The sessions make schedules: they ask for the group that holds the schedule tools.
  const r = await h.api(
    'POST',
    '/v1/sessions',
    { script: idleScript, toolGroups: ['schedules'], ...body },
    { auth },
  );
  assert.equal(r.status, 200, JSON.stringify(r.json));
  return r.json.session.id;
}

const schedulesOf = async (h: HttpWarren): Promise<Sched[]> =>
  (await h.api('GET', '/v1/schedules?limit=500')).json.schedules;

async function until(what: string, ok: () => Promise<boolean>, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

forEachWarren(
  'standing objects',
  (t) => {
    it('caps a session’s schedules (count, period); killing it stops every fire', async () => {
      const h = await startHttp(t, {
        gating: deepTrees,
        plugins: { config: { scheduling: { maxPerSession: 5, minIntervalMs: 2000 } } },
      });
      const room = await h.api('POST', '/v1/streams', { name: 'noise' });
      assert.equal(room.status, 200);
      const a = await spawn(h, h.key);
      await waitStatus(h.warren, a, 'idle');
      assert.equal(
        (await h.api('POST', '/v1/streams/noise/attach', { session: a, mode: 'detach', permission: 'rw' }))
          .status,
        200,
      );
      const tok = h.tokenOf(a);
      const make = (intervalMs: number) =>
        h.api(
          'POST',
          '/v1/schedules',
          { intervalMs, stream: { stream: 'noise', message: 'tick' } },
          { auth: tok },
        );
      const fast = await make(1000);
      assert.equal(fast.status, 400, JSON.stringify(fast.json));
      assert.match(fast.json.error.message, /minIntervalMs/);
      for (let i = 0; i < 5; i++) assert.equal((await make(2000)).status, 200);
      const sixth = await make(2000);
      assert.equal(sixth.status, 429, JSON.stringify(sixth.json));
      assert.match(sixth.json.error.message, /maxPerSession/);
      await until('the schedules to fire', async () => (await schedulesOf(h)).every((s) => s.fires > 0));

      assert.equal((await h.api('POST', `/v1/sessions/${a}/kill`, {})).status, 200);
      await until('its schedules to be disabled', async () =>
        (await schedulesOf(h)).every((s) => !s.enabled),
      );
      const fired = (await schedulesOf(h)).reduce((n, s) => n + s.fires, 0);
      await new Promise((r) => setTimeout(r, 2500));
      assert.equal(
        (await schedulesOf(h)).reduce((n, s) => n + s.fires, 0),
        fired,
        'a schedule fired after its creator was killed',
      );
      // An operator may adopt one: it then acts as the operator, and resumes.
      const one = (await schedulesOf(h))[0]!;
      const adopted = await h.api('POST', `/v1/schedules/${one.id}/adopt`, {});
      assert.equal(adopted.status, 200, JSON.stringify(adopted.json));
      assert.equal(adopted.json.schedule.createdBy, 'operator:admin');
    });

    it('a session that ends on its own hands its schedules to its parent', async () => {
      const h = await startHttp(t, { gating: deepTrees });
      const p = await spawn(h, h.key);
      await waitStatus(h.warren, p, 'idle');
      // b completes at its first input.
      const b = await spawn(h, h.tokenOf(p), { script: { steps: [{ wait: {} }] } });
      await waitStatus(h.warren, b, 'idle');
      const made = await h.api(
        'POST',
        '/v1/schedules',
        { intervalMs: 3_600_000, spawn: { script: idleScript } },
        { auth: h.tokenOf(b) },
      );
      assert.equal(made.status, 200, JSON.stringify(made.json));
      await h.api('POST', `/v1/sessions/${b}/send`, { text: 'done' });
      await waitStatus(h.warren, b, 'stopped');
      await until(
        'the schedule to pass to the parent',
        async () => (await schedulesOf(h))[0]?.createdBy === p,
      );
      const s = (await schedulesOf(h))[0]!;
      assert.equal(s.enabled, true);
      // The parent now answers for it: it sees it, and may delete it.
      const mine = await h.api('GET', '/v1/schedules', undefined, { auth: h.tokenOf(p) });
      assert.deepEqual(
        mine.json.schedules.map((x: Sched) => x.id),
        [s.id],
      );
    });
  },
  ['sqlite'],
);
