/**
 * Budgets per subtree: usage summed up the tree (durably), a breach anywhere below a budget
 * stops the budgeted session (SIGTERM, then SIGKILL past the grace) with `budget_exceeded`,
 * turn and wall-time limits, and caps at spawn. Usage comes from script agents' `usage`
 * steps, reported the way a model runtime reports it.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { subtreeDelta } from '../../src/kernel/usage.ts';
import type { Runtime } from '../../src/runtimes/types.ts';
import type { Warren } from '../../src/syscalls/warren.ts';
import { manualClock } from '../helpers/clock.ts';
import {
  asSession,
  call,
  deepTrees,
  type Ev,
  eventsOf,
  forEachWarren,
  idleScript,
  sessionOf,
  until,
  waitStatus,
} from '../helpers/warrens.ts';

interface Totals {
  inputTokens: number;
  outputTokens: number;
  costUsd: number;
  turns: number;
}

const usage = (inputTokens: number, outputTokens: number, costUsd: number) => ({
  usage: { inputTokens, outputTokens, costUsd },
});

/** The first event of a type in a session's log. */
const eventOf = async (w: Warren, id: string, type: string): Promise<Ev | undefined> =>
  (await eventsOf(w, id)).find((e) => e.type === type);

/** The id of the child a script spawned. */
const childOf = (w: Warren, parent: string): Promise<string> =>
  until(
    async () =>
      ((await call(w, 'ps')).sessions as Array<{ id: string; parentId: string }>).find(
        (s) => s.parentId === parent,
      )?.id,
    5000,
    `a child of ${parent}`,
  );

it('a usage report adds only finite, non-negative, bounded amounts to the subtree totals (agents are untrusted)', () => {
  assert.deepEqual(
    subtreeDelta({ inputTokens: -1e9, outputTokens: Number.NaN, costUsd: Number.POSITIVE_INFINITY }),
    {
      inputTokens: 0,
      outputTokens: 0,
      costUsd: 0,
      turns: 0,
    },
  );
  assert.deepEqual(subtreeDelta({ inputTokens: 1e15, outputTokens: 2.6, costUsd: 0.25, turns: 99 }), {
    inputTokens: 1e9,
    outputTokens: 3,
    costUsd: 0.25,
    turns: 0,
  });
});

forEachWarren('budgets per subtree', (t) => {
  it('sums usage up a three-level tree: own and subtree totals on each level, durable across a restart', async () => {
    const location = t.location();
    let w = await t.open({ location, gating: deepTrees });
    // Each level reports its own usage. The leaf then ends its turn (one turn, as the kernel
    // counts them); the others stay busy, so no SIGCHLD gives them turns of their own.
    const c = { steps: [usage(100, 10, 0.125), { listen: {} }] };
    const b = { steps: [usage(20, 2, 0.25), { spawn: { script: c } }, { sleep: 600_000 }] };
    const a = { steps: [usage(3, 1, 0.5), { spawn: { script: b } }, { sleep: 600_000 }] };
    const top = (await call(w, 'ipc_spawn', { script: a, budget: { inputTokens: 10_000 } })).session.id;
    const mid = await childOf(w, top);
    const leaf = await childOf(w, mid);
    await until(async () => (await sessionOf(w, top)).subtreeUsage.inputTokens === 123, 20_000, 'all usage');
    await waitStatus(w, leaf, 'idle');

    const expect = async (id: string, own: Partial<Totals>, subtree: Totals, turns: number) => {
      const s = await sessionOf(w, id);
      assert.deepEqual(s.usage, own, `${id} own usage`);
      assert.equal(s.turns, turns, `${id} own turns`);
      assert.deepEqual(s.subtreeUsage, subtree, `${id} subtree usage`);
      return s;
    };
    const check = async () => {
      await expect(
        leaf,
        { inputTokens: 100, outputTokens: 10, costUsd: 0.125 },
        {
          inputTokens: 100,
          outputTokens: 10,
          costUsd: 0.125,
          turns: 1,
        },
        1,
      );
      await expect(
        mid,
        { inputTokens: 20, outputTokens: 2, costUsd: 0.25 },
        {
          inputTokens: 120,
          outputTokens: 12,
          costUsd: 0.375,
          turns: 1,
        },
        0,
      );
      const s = await expect(
        top,
        { inputTokens: 3, outputTokens: 1, costUsd: 0.5 },
        {
          inputTokens: 123,
          outputTokens: 13,
          costUsd: 0.875,
          turns: 1,
        },
        0,
      );
      assert.deepEqual(s.budget.limits, { inputTokens: 10_000 });
      assert.deepEqual(s.budget.remaining, { inputTokens: 10_000 - 123 });
      assert.equal(s.budget.exceeded, null);
      assert.equal((await sessionOf(w, mid)).budget, null, 'no budget of its own');
    };
    await check();

    await w.close();
    // Not resumed: a resumed script takes a turn at its standing step, and this counts what was.
    w = await t.open({ location, gating: deepTrees, kernel: { resumeOnStart: false } });
    await check();
  });

  it('a breach deep in the subtree SIGTERMs the budgeted ancestor, which stops with budget_exceeded and takes its subtree', async () => {
    const w = await t.open({ gating: deepTrees, kernel: { termGraceMs: 5_000 } });
    const leafScript = {
      steps: [{ wait: {} }, usage(600, 1, 0), usage(600, 1, 0), { listen: {} }],
    };
    const b = { steps: [{ spawn: { script: leafScript } }, { listen: {} }] };
    const a = { steps: [{ spawn: { script: b } }, { listen: {} }] };
    const top = (await call(w, 'ipc_spawn', { script: a, budget: { inputTokens: 1000 } })).session.id;
    const mid = await childOf(w, top);
    const leaf = await childOf(w, mid);
    await waitStatus(w, leaf, 'idle');
    await call(w, 'send', { id: leaf, text: 'go' });

    const exceeded = await until(() => eventOf(w, top, 'budget.exceeded'), 20_000, 'budget.exceeded');
    assert.deepEqual(exceeded.payload, { limit: 'inputTokens', max: 1000, used: 1200, over: 200, by: leaf });
    // Told, as input it can act on, why.
    const input = await until(
      async () =>
        (await eventsOf(w, top)).find(
          (e) => e.type === 'session.input' && /\[SIGTERM\]/.test(e.payload.text ?? ''),
        ),
      5000,
      'the SIGTERM as input',
    );
    assert.match(input.payload.text ?? '', /input tokens budget is spent: 1200 used of 1000/);
    // It ended its turn on the SIGTERM: that is the stop; the reason is the budget.
    await waitStatus(w, top, 'stopped');
    const s = await sessionOf(w, top);
    assert.equal(s.endReason, 'budget_exceeded');
    assert.match(s.endDetail, /input tokens budget is spent/);
    assert.deepEqual(s.budget.exceeded, { limit: 'inputTokens', max: 1000, used: 1200, over: 200 });
    assert.deepEqual(s.budget.remaining, { inputTokens: 0 });
    // Its subtree went with it (the cascade), not handed up to init.
    for (const id of [mid, leaf]) {
      await waitStatus(w, id, 'stopped');
      assert.equal((await sessionOf(w, id)).endReason, 'reaped', id);
    }
    // One breach, one SIGTERM: later reports do not signal again.
    const signals = (await eventsOf(w, top)).filter(
      (e) => e.type === 'signal' && e.payload.signal === 'SIGTERM',
    );
    assert.equal(signals.length, 1);
  });

  it('a budgeted session that ignores its SIGTERM is SIGKILLed past the grace period, still budget_exceeded', async () => {
    const w = await t.open({ gating: deepTrees, kernel: { termGraceMs: 300 } });
    const leafScript = { steps: [usage(0, 50, 0.5), usage(0, 50, 0.5), usage(0, 50, 0.5), { listen: {} }] };
    // Busy (asleep) the whole time: it never reaches a safe point to take the SIGTERM.
    const a = { steps: [{ spawn: { script: leafScript } }, { sleep: 600_000 }] };
    const top = (await call(w, 'ipc_spawn', { script: a, budget: { costUsd: 1 } })).session.id;
    const leaf = await childOf(w, top);
    await waitStatus(w, top, 'stopped', 20_000);
    const s = await sessionOf(w, top);
    assert.equal(s.endReason, 'budget_exceeded');
    const log = await eventsOf(w, top);
    const exceeded = log.find((e) => e.type === 'budget.exceeded');
    assert.deepEqual(exceeded?.payload, { limit: 'costUsd', max: 1, used: 1, over: 0, by: leaf });
    const sigs = log
      .filter((e) => e.type === 'signal' && e.payload.signal !== 'SIGCHLD')
      .map((e) => e.payload);
    assert.deepEqual(
      sigs.map((p) => p.signal),
      ['SIGTERM', 'SIGKILL'],
    );
    assert.equal(sigs[1]?.escalatedFrom, 'SIGTERM');
    const end = log.find((e) => e.type === 'session.status' && e.payload.to === 'stopped');
    assert.equal(end?.payload.endReason, 'budget_exceeded');
    assert.equal(end?.payload.limit, 'costUsd');
    await waitStatus(w, leaf, 'stopped');
  });

  it('a breach survives a restart: the pending SIGTERM still ends the session as budget_exceeded', async () => {
    const location = t.location();
    let w = await t.open({ location, kernel: { termGraceMs: 1_000 } });
    // Asleep: the SIGTERM waits for a safe point that never comes.
    const a = { steps: [usage(50, 0, 0), { sleep: 600_000 }] };
    const top = (await call(w, 'ipc_spawn', { script: a, budget: { inputTokens: 50 } })).session.id;
    await until(() => eventOf(w, top, 'budget.exceeded'), 20_000, 'budget.exceeded');
    await w.close();
    w = await t.open({ location, kernel: { termGraceMs: 1_000, resumeOnStart: false } });
    await waitStatus(w, top, 'stopped', 20_000);
    const s = await sessionOf(w, top);
    assert.equal(s.endReason, 'budget_exceeded');
    assert.deepEqual(s.budget.exceeded, { limit: 'inputTokens', max: 50, used: 50, over: 0 });
  });

  it('a turn limit counts every turn in the subtree', async () => {
    const w = await t.open({ gating: deepTrees, kernel: { termGraceMs: 300 } });
    // The lead stays busy (no turns of its own, SIGCHLDs wait): every turn is the worker's.
    const a = { steps: [{ spawn: { script: idleScript } }, { sleep: 600_000 }] };
    const top = (await call(w, 'ipc_spawn', { script: a, budget: { turns: 3 } })).session.id;
    const worker = await childOf(w, top);
    await waitStatus(w, worker, 'idle');
    await until(async () => (await sessionOf(w, top)).subtreeUsage.turns === 1, 20_000, 'one turn');
    assert.equal((await sessionOf(w, top)).budget.remaining.turns, 2);
    await call(w, 'send', { id: worker, text: 'one' });
    await until(async () => (await sessionOf(w, top)).subtreeUsage.turns === 2, 20_000, 'two turns');
    assert.equal(await eventOf(w, top, 'budget.exceeded'), undefined, 'not yet');
    await call(w, 'send', { id: worker, text: 'two' });
    const exceeded = await until(() => eventOf(w, top, 'budget.exceeded'), 20_000, 'budget.exceeded');
    assert.deepEqual(exceeded.payload, { limit: 'turns', max: 3, used: 3, over: 0, by: worker });
    await waitStatus(w, top, 'stopped');
    const s = await sessionOf(w, top);
    assert.equal(s.endReason, 'budget_exceeded');
    assert.equal(s.turns, 0);
    assert.equal(s.subtreeUsage.turns, 3);
    await waitStatus(w, worker, 'stopped');
  });

  it('wall time: a timer stops the budgeted session at its deadline', async () => {
    const w = await t.open({ kernel: { termGraceMs: 5_000 } });
    const top = (await call(w, 'ipc_spawn', { script: idleScript, budget: { wallMs: 300 } })).session;
    assert.equal(top.budget.deadline, top.createdAt + 300);
    const exceeded = await until(() => eventOf(w, top.id, 'budget.exceeded'), 20_000, 'budget.exceeded');
    assert.equal(exceeded.payload.limit, 'wallMs');
    assert.equal(exceeded.payload.max, 300);
    assert.ok((exceeded.payload.used as number) >= 300);
    await waitStatus(w, top.id, 'stopped');
    assert.equal((await sessionOf(w, top.id)).endReason, 'budget_exceeded');
  });

  it('wall time: the reconcile phase catches a deadline no timer fired for', async () => {
    const clock = manualClock(Date.now());
    const w = await t.open({ clock, kernel: { termGraceMs: 5_000 } });
    // A real timer an hour out: only the phase can see the (moved) clock pass the deadline.
    const top = (await call(w, 'ipc_spawn', { script: idleScript, budget: { wallMs: 3_600_000 } })).session;
    await waitStatus(w, top.id, 'idle');
    await w.kernel.reconcile();
    assert.equal(await eventOf(w, top.id, 'budget.exceeded'), undefined, 'not due yet');
    clock.set(top.createdAt + 3_600_000 + 5);
    await w.kernel.reconcile();
    const exceeded = await until(() => eventOf(w, top.id, 'budget.exceeded'), 20_000, 'budget.exceeded');
    assert.deepEqual(exceeded.payload, {
      limit: 'wallMs',
      max: 3_600_000,
      used: 3_600_005,
      over: 5,
      by: 'kernel',
    });
    await waitStatus(w, top.id, 'stopped');
    // A second tick finds nothing due: the deadline left the index with the breach.
    await w.kernel.reconcile();
    const all = (await eventsOf(w, top.id)).filter((e) => e.type === 'budget.exceeded');
    assert.equal(all.length, 1);
  });

  it("caps a child's budget by what is left of its parent's: over_budget names the limit, what was asked and what is left", async () => {
    const w = await t.open({ gating: deepTrees });
    const a = { steps: [usage(400, 0, 0), { listen: {} }] };
    const top = (await call(w, 'ipc_spawn', { script: a, budget: { inputTokens: 1000, turns: 10 } })).session
      .id;
    await until(async () => (await sessionOf(w, top)).subtreeUsage.inputTokens === 400, 20_000, 'usage');
    const as = asSession(top, 1);
    await assert.rejects(
      call(w, 'ipc_spawn', { script: idleScript, budget: { inputTokens: 700 } }, as),
      (e: Error & { code: string; status: number; details: Record<string, unknown> }) => {
        assert.equal(e.code, 'over_budget');
        assert.equal(e.status, 422);
        assert.deepEqual(e.details, { budgetOf: top, limit: 'inputTokens', asked: 700, left: 600 });
        return true;
      },
    );
    // Within what is left: granted; and a child with no budget is still covered.
    const child = (await call(w, 'ipc_spawn', { script: idleScript, budget: { inputTokens: 600 } }, as))
      .session;
    assert.deepEqual(child.budget.limits, { inputTokens: 600 });
    // A limit the parent does not set is the child's own to choose.
    await call(w, 'ipc_spawn', { script: idleScript, budget: { outputTokens: 5 } }, as);
    await call(w, 'ipc_spawn', { script: idleScript }, as);
    // Bad numbers are refused before anything is written.
    await assert.rejects(call(w, 'ipc_spawn', { script: idleScript, budget: { inputTokens: -1 } }), {
      code: 'invalid_input',
    });
    await assert.rejects(call(w, 'ipc_spawn', { script: idleScript, budget: { turns: 1.5 } }), {
      code: 'invalid_input',
    });
    await assert.rejects(call(w, 'ipc_spawn', { script: idleScript, budget: { costUsd: 1e9 } }), {
      code: 'invalid_input',
    });
  });

  it('a parent whose budget is spent cannot spawn, even a child that asks for no budget', async () => {
    // The breach's SIGTERM waits (asleep, no safe point): the parent is still live but spent.
    const w = await t.open({ gating: deepTrees, kernel: { termGraceMs: 60_000 } });
    const a = { steps: [usage(1000, 0, 0), { sleep: 600_000 }] };
    const top = (await call(w, 'ipc_spawn', { script: a, budget: { inputTokens: 1000 } })).session.id;
    await until(() => eventOf(w, top, 'budget.exceeded'), 20_000, 'budget.exceeded');
    assert.equal((await sessionOf(w, top)).status, 'running');
    await assert.rejects(
      call(w, 'ipc_spawn', { script: idleScript }, asSession(top, 1)),
      (e: Error & { code: string; details: Record<string, unknown> }) => {
        assert.equal(e.code, 'over_budget');
        assert.equal(e.details.budgetOf, top);
        assert.equal(e.details.limit, 'inputTokens');
        assert.equal(e.details.left, 0);
        return true;
      },
    );
    await call(w, 'kill', { id: top });
  });

  it('an agent that spends its budget while it is still starting is asked to stop (SIGTERM), not ended unasked', async () => {
    // The report lands before the runtime's start returns: the kernel holds no handle yet.
    let told = false;
    const eager: Runtime = {
      name: 'eager',
      inProcess: true,
      validate: () => {},
      async start(ctx) {
        await ctx.sink.usage({ inputTokens: 1000, outputTokens: 0, costUsd: 0 });
        const termAsked = () => {
          told = true;
        };
        return { ready: false, deliver: () => {}, stop: async () => {}, termAsked };
      },
    };
    const w = await t.open({ runtimes: [eager] });
    const { id } = (await call(w, 'ipc_spawn', { runtime: 'eager', budget: { inputTokens: 1000 } })).session;
    await until(() => eventOf(w, id, 'budget.exceeded'), 20_000, 'budget.exceeded');
    const term = await until(
      async () => (await eventsOf(w, id)).find((e) => e.type === 'signal' && e.payload.signal === 'SIGTERM'),
      20_000,
      'its SIGTERM',
    );
    assert.ok(term.payload.budget, 'the SIGTERM names the budget');
    assert.equal((await sessionOf(w, id)).status, 'running');
    // The stop asked while it started is passed on once its handle exists.
    await until(() => told, 20_000, 'the agent told of the stop');
    await call(w, 'kill', { id });
    await waitStatus(w, id, 'stopped');
  });
});
