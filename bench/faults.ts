/**
 * `npm run bench -- faults`: issue 26's faults, each three times, on the rig the fault suite
 * uses (test/cluster/faults.ts: a PostgreSQL of its own, three nodes, two runners, traffic).
 * Per fault, from the moment it is injected: the time until a write through every node is
 * acknowledged again, and until every session is live with one agent process again — beside
 * the same run's baseline, node 0 SIGKILLed (the fault the cluster was first tested with).
 * The suite's invariants are counted at the end (a bench does not fail, it reports).
 */
import { FAULT_LEASE_MS, FAULTS, FaultRig, type Recovery } from '../test/cluster/faults.ts';
import { lateWrites } from '../test/cluster/write-log.ts';
import { OwnPostgres, postgresBin } from '../test/helpers/own-postgres.ts';
import { summary } from './lib/stats.ts';
import type { BenchRow } from './store.ts';

const ROUNDS = 3;

async function faultsBench(): Promise<BenchRow[]> {
  const found = postgresBin();
  if ('problem' in found)
    return [{ name: 'faults', value: Number.NaN, unit: '', note: `SKIPPED: ${found.problem}` }];
  const db = await OwnPostgres.start();
  const rigs: FaultRig[] = [];
  try {
    const rig = await FaultRig.start(db, rigs);
    const runs: Recovery[] = [];
    for (let round = 0; round < ROUNDS; round++) {
      for (const fault of FAULTS) runs.push(await rig.inject(fault));
      runs.push(await rig.killNode());
    }
    const rows = recoveryRows(runs);
    const missing = await rig.drain();
    const late = await rig.cluster.withStore((store) => lateWrites(store, 'faults'));
    // What broke, for whoever reads the run (the table only counts it).
    const broken = { missing, doubled: rig.doubled(), late, exits: rig.casualties() };
    for (const [what, list] of Object.entries(broken))
      if (list.length > 0) process.stderr.write(`faults: ${what}: ${JSON.stringify(list.slice(0, 20))}\n`);
    rows.push({
      name: 'faults: invariants broken',
      value: Object.values(broken).reduce((n, list) => n + list.length, 0),
      unit: '',
      max: 0,
      note: `${missing.length} sends unanswered, ${broken.doubled.length} samples with two processes, ${late.length} late rows, ${broken.exits.length} exits; ${rig.acked.length} writes acknowledged; lease ${FAULT_LEASE_MS} ms`,
    });
    return rows;
  } finally {
    for (const r of rigs) await r.cleanup();
    await db.destroy();
  }
}

/** Per fault, the median of its runs (max in the note), beside the SIGKILL baseline's median. */
function recoveryRows(runs: Recovery[]): BenchRow[] {
  const by = new Map<string, Recovery[]>();
  for (const r of runs) by.set(r.fault, [...(by.get(r.fault) ?? []), r]);
  const base = [...by].find(([f]) => f.includes('SIGKILL'))?.[1] ?? [];
  const baseWrites = summary(base.map((r) => r.writesMs)).p50;
  const baseLive = summary(base.map((r) => r.liveMs)).p50;
  const rows: BenchRow[] = [];
  for (const [fault, rs] of by) {
    const w = summary(rs.map((r) => r.writesMs));
    const l = summary(rs.map((r) => r.liveMs));
    rows.push(
      {
        name: `faults: ${fault}: writes served again p50`,
        value: Math.round(w.p50),
        unit: 'ms',
        baseline: Math.round(baseWrites),
        note: `max ${Math.round(w.max)} ms, ${w.n} runs; baseline: SIGKILL of a node`,
      },
      {
        name: `faults: ${fault}: sessions live again p50`,
        value: Math.round(l.p50),
        unit: 'ms',
        baseline: Math.round(baseLive),
        note: `max ${Math.round(l.max)} ms, ${l.n} runs`,
      },
    );
  }
  return rows;
}

export const faultBenches = { faults: faultsBench };
