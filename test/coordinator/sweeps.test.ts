/**
 * The background workers with an injected clock: the TTL sweeper and the retention cleaner,
 * on SQLite and PostgreSQL; and the try-lock that keeps a sweep on one server process at a
 * time, with two kernels on one PostgreSQL schema.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Coordinator } from '../../src/plugins/coordinator/coordinator.ts';
import { exclusive } from '../../src/plugins/coordinator/exclusive.ts';
import { manualClock } from '../helpers/clock.ts';
import type { HttpWarren } from '../helpers/http.ts';
import { forEachWarren, until } from '../helpers/warrens.ts';
import { coordinatorWarren, rows } from './helpers.ts';

// biome-ignore lint/suspicious/noExplicitAny: rows are checked by the tests that read them
type Any = any;

const T0 = Date.parse('2031-03-01T00:00:00Z');
const DAY = 86_400_000;
const HOUR = 3_600_000;
const Z = '/zones/default';
/** Workers that never run by their own timers in a test: the test runs them (runNow). */
const still = {
  ttlSweepIntervalMs: HOUR,
  deadlineSweepIntervalMs: HOUR,
  retentionCleanupIntervalMs: HOUR,
  outbox: { intervalMs: HOUR },
};

const coordinatorOf = (h: HttpWarren) => h.warren.plugins.get<Coordinator>('coordinator');
const statusOf = async (h: HttpWarren) =>
  new Map(
    (await rows(h, 'coordinator_agents')).map((r: Any) => [r.session_id as string, r.status as string]),
  );

forEachWarren('coordinator sweeps (injected clock)', (target) => {
  const open = async (config: Record<string, unknown> = {}) => {
    const clock = manualClock(T0);
    const h = await coordinatorWarren(target, { ...still, ...config }, { clock });
    const spawn = async (body: Record<string, unknown>) => {
      const r = await h.api('POST', `${Z}/agents`, { application_id: 'app', ...body });
      assert.equal(r.json.created, true, JSON.stringify(r.json));
      return r.json.agent.id as string;
    };
    return { h, clock, spawn };
  };

  describe('TTL sweeper', () => {
    it('terminates sessions past spawned_at + ttl_seconds with their subtree, one revoke event per session', async () => {
      const { h, clock, spawn } = await open();
      const short = await spawn({ ttl_seconds: 60 });
      const child = await spawn({ parent_id: short });
      const grandchild = await spawn({ parent_id: child });
      const long = await spawn({ ttl_seconds: 3600 });
      const forever = await spawn({});
      const c = coordinatorOf(h);

      clock.set(T0 + 59_000);
      await c.runNow('ttl-sweeper');
      assert.ok(
        [...(await statusOf(h)).values()].every((s) => s !== 'terminated'),
        'nothing before its time',
      );

      clock.set(T0 + 60_000);
      await c.runNow('ttl-sweeper');
      const after = await statusOf(h);
      for (const id of [short, child, grandchild]) assert.equal(after.get(id), 'terminated', id);
      for (const id of [long, forever]) assert.notEqual(after.get(id), 'terminated', id);
      const revokes = (await rows(h, 'coordinator_outbox')).filter(
        (r: Any) => r.topic === 'caracal.sessions.revoke',
      );
      assert.deepEqual(revokes.map((r: Any) => r.key).sort(), [short, child, grandchild].sort());
      for (const r of revokes) assert.equal(JSON.parse(r.payload).reason, 'ttl_expired');
      // The kernel's view follows: the warren sessions stopped.
      for (const id of [short, child, grandchild]) {
        const s = (await h.api('GET', `/v1/sessions/${id}`)).json.session;
        assert.equal(s.status, 'stopped', id);
      }

      // A second sweep finds nothing more to do: no second event.
      await c.runNow('ttl-sweeper');
      const again = (await rows(h, 'coordinator_outbox')).filter(
        (r: Any) => r.topic === 'caracal.sessions.revoke',
      );
      assert.equal(again.length, 3);

      clock.set(T0 + 3600_000);
      await c.runNow('ttl-sweeper');
      assert.equal((await statusOf(h)).get(long), 'terminated');
      assert.notEqual((await statusOf(h)).get(forever), 'terminated');
    });
  });

  describe('retention cleaner', () => {
    it('drops delegation edges and delivered outbox rows past their windows; pending and dead rows stay', async () => {
      const { h, clock, spawn } = await open({ delegationRetentionDays: 30, outboxRetentionDays: 2 });
      const [a, b] = [await spawn({}), await spawn({})];
      const edge = (await h.api('POST', `${Z}/delegations`, { source_agent_id: a, target_agent_id: b })).json
        .delegation;
      assert.ok(edge?.id);
      const c = coordinatorOf(h);
      // Events of the first day, delivered at T0 (no sinks: the publisher delivers to none).
      await h.api('DELETE', `${Z}/agents/${a}`);
      const delivered = await until(async () => {
        await c.runNow('outbox-publisher');
        const all = await rows(h, 'coordinator_outbox');
        return all.length > 0 && all.every((r: Any) => r.status === 'delivered') ? all : undefined;
      }, 15_000);
      // One of them marked dead by hand: retention leaves dead rows to the operator.
      const dead = delivered[0].id as string;
      const store = h.warren.store as Any;
      await store.writer.write(async (tx: Any) => {
        await tx.db
          .updateTable('coordinator_outbox')
          .set({ status: 'dead', delivered_at: null })
          .where('id', '=', dead)
          .execute();
      });
      const ids = async () => (await rows(h, 'coordinator_outbox')).map((r: Any) => r.id as string).sort();

      clock.set(T0 + 2 * DAY - 1);
      await c.runNow('retention-cleaner');
      assert.equal((await ids()).length, delivered.length, 'nothing is old enough yet');

      clock.set(T0 + 2 * DAY + 1);
      const before = new Set(await ids());
      await h.api('DELETE', `${Z}/agents/${b}`); // fresh events, written (and maybe delivered) now
      const fresh = (await ids()).filter((id) => !before.has(id));
      assert.ok(fresh.length > 0);
      await c.runNow('retention-cleaner');
      assert.deepEqual(await ids(), [dead, ...fresh].sort(), 'only the T0 deliveries went');
      assert.equal(
        (await h.api('GET', `${Z}/delegations`)).json.delegations.length,
        1,
        'the edge is younger than 30 days',
      );

      clock.set(T0 + 30 * DAY + 1);
      await c.runNow('retention-cleaner');
      assert.equal((await h.api('GET', `${Z}/delegations`)).json.delegations.length, 0);
      const last = await rows(h, 'coordinator_outbox');
      assert.ok(
        last.some((r: Any) => r.id === dead && r.status === 'dead'),
        'retention never takes a dead row',
      );
      assert.ok(
        last.every((r: Any) => r.status !== 'delivered'),
        'delivered rows older than 2 days are gone',
      );
    });
  });
});

forEachWarren(
  'coordinator sweeps on two kernels sharing one PostgreSQL',
  (target) => {
    it('the try-lock lets one process run a sweep at a time; the other skips while it is held', async () => {
      const location = target.location();
      const a = await target.open({ location });
      // Another node: in one process both would derive the same id from the location.
      const b = await target.open({ location, kernel: { nodeId: 'sweeps-b' } });
      let release!: () => void;
      const gate = new Promise<void>((r) => {
        release = r;
      });
      const runs: string[] = [];
      let entered!: () => void;
      const inside = new Promise<void>((r) => {
        entered = r;
      });
      const first = exclusive(a.store, 'ttl-sweeper', async () => {
        runs.push('a');
        entered();
        await gate;
      });
      await inside;
      // While a holds it, b (another kernel: another process's connection pool) skips, every time.
      for (let i = 0; i < 5; i++) {
        assert.equal(await exclusive(b.store, 'ttl-sweeper', async () => void runs.push('b')), false);
      }
      // Another worker's lock is not this one.
      assert.equal(
        await exclusive(b.store, 'retention-cleaner', async () => void runs.push('b-retention')),
        true,
      );
      release();
      assert.equal(await first, true);
      assert.equal(await exclusive(b.store, 'ttl-sweeper', async () => void runs.push('b')), true);
      assert.deepEqual(runs, ['a', 'b-retention', 'b']);
    });

    it('two kernels sweeping the same expired sessions at once terminate each once: one event per session', async () => {
      const location = target.location();
      const clock = manualClock(T0);
      const h1 = await coordinatorWarren(target, still, { clock, location });
      // The second server process: another kernel on the same schema (the operator key is h1's),
      // another node. Under the id both derive from the location, its join took h1's epoch and
      // h1's next renewal fenced h1, a real-time heartbeat later: mid-test on a slow machine.
      const w2 = await target.open({
        location,
        clock,
        kernel: { nodeId: 'sweeps-w2' },
        plugins: { config: { coordinator: still } },
      });
      const ids: string[] = [];
      for (let i = 0; i < 12; i++) {
        const r = await h1.api('POST', `${Z}/agents`, { application_id: 'app', ttl_seconds: 10 });
        ids.push(r.json.agent.id);
      }
      clock.set(T0 + 10_000);
      const [c1, c2] = [coordinatorOf(h1), w2.plugins.get<Coordinator>('coordinator')];
      // While the first process holds the sweep's lock, the second one's real sweep is skipped.
      let release!: () => void;
      const gate = new Promise<void>((r) => {
        release = r;
      });
      let held!: () => void;
      const holding = new Promise<void>((r) => {
        held = r;
      });
      const holder = exclusive(h1.warren.store, 'ttl-sweeper', async () => {
        held();
        await gate;
      });
      await holding;
      await c2.runNow('ttl-sweeper');
      assert.ok(
        [...(await statusOf(h1)).values()].every((s) => s !== 'terminated'),
        'the skipped sweep terminated nothing',
      );
      release();
      assert.equal(await holder, true);
      // Then both sweep at once, again and again: each session ends once.
      await Promise.all([1, 2, 3].flatMap(() => [c1.runNow('ttl-sweeper'), c2.runNow('ttl-sweeper')]));
      await Promise.all([c1.runNow('ttl-sweeper'), c2.runNow('ttl-sweeper')]);
      const revokes = (await rows(h1, 'coordinator_outbox')).filter(
        (r: Any) => r.topic === 'caracal.sessions.revoke',
      );
      assert.deepEqual(
        revokes.map((r: Any) => r.key).sort(),
        [...ids].sort(),
        'exactly one event per session',
      );
      assert.ok([...(await statusOf(h1)).values()].every((s) => s === 'terminated'));
    });
  },
  ['postgres'],
);
