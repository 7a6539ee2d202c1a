import type { ExpressionBuilder } from 'kysely';
import { killRecordedGroup, killRun } from '../runtimes/process.ts';
import { sweepRunDir } from '../runtimes/rundir.ts';
import type { Database } from '../store/schema.ts';
import { KERNEL_ACTOR } from '../vocab/principal.ts';
import type { KernelContext } from './context.ts';
import { markPrefix } from './supervisor.ts';

/**
 * Before anything is resumed: end every agent process a previous run of this node left alive
 * (recorded groups whose leader is still the same process, then anything still carrying this
 * node's marks — descendants that left their group included) and sweep its private files.
 * A session is then resumed exactly once, by this run.
 */
export async function endOrphans(
  k: KernelContext,
  runId: string,
): Promise<{ groups: number; processes: number }> {
  const nodeId = k.config.nodeId;
  const rows = await k.store.reader
    .selectFrom('agent_procs')
    .selectAll()
    .where('run_id', 'like', `${nodeId}.%`)
    .where('run_id', '!=', runId)
    .execute();
  let groups = 0;
  for (const r of rows) {
    // Without a start time the pid may name another process by now: the mark sweep below covers it.
    // The boot id too: after a reboot the same pid and start time can name another process.
    const rec = { pid: r.pid, pgid: r.pgid, startTime: r.start_time ?? '', bootId: r.boot_id };
    if (r.start_time && killRecordedGroup(rec)) groups += 1;
  }
  const processes = await killRun(markPrefix(nodeId));
  sweepRunDir(markPrefix(nodeId));
  if (rows.length > 0) {
    await k.store.writer.write(async (tx) => {
      await tx.db
        .deleteFrom('agent_procs')
        .where('run_id', 'like', `${nodeId}.%`)
        .where('run_id', '!=', runId)
        .execute();
      if (groups + processes > 0) {
        tx.append({
          zone: 'default',
          type: 'node.orphans_ended',
          actor: 'kernel',
          payload: { nodeId, groups, processes },
        });
      }
    });
  }
  return { groups, processes };
}

/**
 * After a restart no agent is running: live sessions lost their transport. Returns their ids,
 * and those of sessions an earlier restart suspended that were not resumed yet (resumption
 * runs in the background after the server answers: a crash during it must not drop the rest).
 * One statement suspends them all and one event each records it (what `setStatus` writes for
 * a move to suspended, which notifies nobody): a restart costs what is live, not a round of
 * queries per session. `idle`: those that were idle, whose parents already heard of them.
 */
export async function recover(k: KernelContext): Promise<{ ids: string[]; idle: Set<string> }> {
  return k.store.writer.write(async (tx) => {
    const live = ['pending', 'running', 'idle'] as const;
    // This node's sessions only: other nodes on the database run theirs (docs/scaling.md).
    const mine = (eb: ExpressionBuilder<Database, 'sessions'>) =>
      eb.or([eb('owner_node', '=', k.node.id), eb('owner_node', 'is', null)]);
    const reason = 'kernel restart';
    // Read before the update below adds to them.
    const waiting = await tx.db
      .selectFrom('sessions')
      .select('id')
      .where('status', '=', 'suspended')
      .where('suspend_reason', '=', reason)
      .where('depth', '>', 0)
      .where(mine)
      .execute();
    const rows = await tx.db
      .selectFrom('sessions')
      .select(['id', 'zone', 'status'])
      .where('status', 'in', live)
      .where('depth', '>', 0)
      .where(mine)
      .execute();
    if (rows.length > 0) {
      await tx.db
        .updateTable('sessions')
        .set({ status: 'suspended', suspend_reason: reason, updated_at: tx.now })
        .where('status', 'in', live)
        .where('depth', '>', 0)
        .where(mine)
        .execute();
      for (const r of rows) {
        tx.append({
          zone: r.zone,
          type: 'session.status',
          actor: KERNEL_ACTOR,
          session_id: r.id,
          payload: { from: r.status, to: 'suspended', reason },
        });
      }
    }
    const terms = await tx.db
      .selectFrom('sessions')
      .select(['id', 'term_deadline'])
      .where('status', '!=', 'stopped')
      .where('term_deadline', 'is not', null)
      .execute();
    for (const t of terms) tx.afterCommit(() => k.term.arm(t.id, Number(t.term_deadline)));
    // Idle ones were where their parents last heard of them: resumed, they wake nobody.
    return {
      ids: [...waiting, ...rows].map((r) => r.id),
      idle: new Set(rows.filter((r) => r.status === 'idle').map((r) => r.id)),
    };
  });
}
