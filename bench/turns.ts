/**
 * Turn cost with usage summed up the tree. Run this file on its own (`npx tsx bench/turns.ts`)
 * to print its rows; `npm run bench -- turns` runs it in the table.
 *
 * 20 leaf script sessions each take turns in a closed loop: the operator `send`s one input,
 * the leaf's turn ends (idle: the kernel counts the turn, on its row and up its subtree's
 * totals), the next input follows. Three shapes: leaves at depth 1 (no ancestors below init:
 * a turn costs no extra statement), at depth 3 under two unbudgeted ancestors (one more
 * UPDATE per turn), and at depth 3 under a budgeted ancestor (that UPDATE plus one read of
 * the budgets that cover it). Turns/s and the turn's p50/p99 (send → its idle committed),
 * on SQLite.
 */
import { allSyscalls } from '../src/syscalls/table.ts';
import { Warren } from '../src/syscalls/warren.ts';
import { op, roomyKernel } from './lib/sessions.ts';
import { load1, round, summary } from './lib/stats.ts';
import { tempDir } from './lib/tempdir.ts';
import type { BenchRow } from './store.ts';

/** Tier defaults opened up: sessions below the top spawn too. */
const everySessionTool = allSyscalls.filter((s) => s.callers.includes('session')).map((s) => s.name);
const deepTrees = { tiers: { agent: everySessionTool, worker: everySessionTool } };

const LEAVES = 20;
const TURNS_PER_LEAF = 100;
const LEAF = { steps: [{ listen: {} }] };
/** A parent that spawns and then stays busy: it takes no turns of its own. */
const above = (child: unknown) => ({ steps: [{ spawn: { script: child } }, { sleep: 3_600_000 }] });

type Shape = 'depth 1' | 'depth 3' | 'depth 3, budgeted';

async function run(shape: Shape): Promise<{ rate: number; p50: number; p99: number; cpuUs: number }> {
  using tmp = tempDir();
  const warren = await Warren.open({ dataDir: tmp.dir, kernel: roomyKernel(false), gating: deepTrees });
  try {
    // The leaves, found as each one's first idle commits.
    const idleWaiters = new Map<string, () => void>();
    const leaves: string[] = [];
    const depthOf = new Map<string, number>();
    const unsubscribe = warren.store.writer.onCommit((events) => {
      for (const e of events) {
        if (e.type === 'session.spawned' && e.session_id)
          depthOf.set(e.session_id, Number((e.payload as { depth: number }).depth));
        if (e.type !== 'session.status' || (e.payload as { to?: string }).to !== 'idle' || !e.session_id)
          continue;
        const w = idleWaiters.get(e.session_id);
        if (w) {
          idleWaiters.delete(e.session_id);
          w();
        } else if (
          depthOf.get(e.session_id) === (shape === 'depth 1' ? 1 : 3) &&
          !leaves.includes(e.session_id)
        )
          leaves.push(e.session_id);
      }
    });
    const script = shape === 'depth 1' ? LEAF : above(above(LEAF));
    for (let i = 0; i < LEAVES; i++) {
      await warren.call(op, 'ipc_spawn', {
        runtime: 'script',
        script,
        ...(shape === 'depth 3, budgeted' ? { budget: { turns: 1_000_000_000 } } : {}),
      });
    }
    const t0 = performance.now();
    while (leaves.length < LEAVES && performance.now() - t0 < 30_000)
      await new Promise((r) => setTimeout(r, 10));
    if (leaves.length < LEAVES) throw new Error(`${shape}: only ${leaves.length} leaves came up`);

    const ms: number[] = [];
    const loop = async (id: string) => {
      for (let i = 0; i < TURNS_PER_LEAF; i++) {
        const t = performance.now();
        const idle = new Promise<void>((r) => idleWaiters.set(id, r));
        await warren.call(op, 'send', { id, text: `t${i}` });
        await idle;
        ms.push(performance.now() - t);
      }
    };
    const start = performance.now();
    const cpu0 = process.cpuUsage();
    await Promise.all(leaves.map(loop));
    const cpu = process.cpuUsage(cpu0);
    const took = performance.now() - start;
    unsubscribe();
    const s = summary(ms);
    // CPU per turn: on a shared machine, steadier than the rate (others' load shows in wall time).
    return {
      rate: (ms.length / took) * 1000,
      p50: s.p50,
      p99: s.p99,
      cpuUs: (cpu.user + cpu.system) / ms.length,
    };
  } finally {
    await warren.close();
  }
}

async function turnCost(): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  let flat: number | undefined;
  for (const shape of ['depth 1', 'depth 3', 'depth 3, budgeted'] as const) {
    const r = await run(shape);
    flat ??= r.rate;
    const note = `${LEAVES} leaves × ${TURNS_PER_LEAF} turns, closed loop, SQLite; p50 ${round(r.p50)} ms, p99 ${round(r.p99)} ms; ${round(r.cpuUs, 0)} µs CPU/turn; load ${load1()}`;
    rows.push({
      name: `turns/s, ${shape}`,
      value: round(r.rate, 0),
      unit: 'turns/s',
      ...(shape === 'depth 1' ? {} : { baseline: round(flat, 0), ratio: round(r.rate / flat) }),
      note,
    });
  }
  return rows;
}

export const turnBenches = { turnCost };

if (import.meta.url === `file://${process.argv[1]}`) {
  const { formatRows } = await import('./store.ts');
  console.log(formatRows(await turnCost()));
}
