import type { WriteTx } from '../store/writer.ts';
import type { TimerHandle } from '../util/clock.ts';
import { KERNEL_ACTOR } from '../vocab/principal.ts';
import {
  type Breach,
  breachText,
  budgetOf,
  firstBreach,
  type ScopeRow,
  scopeRows,
  totalsOf,
} from './budget.ts';
import type { Core } from './core.ts';
import { endSession } from './lifecycle.ts';
import { sessionById, sessionRow } from './lookup.ts';
import { agentLive } from './ownership.ts';
import { logSignal, requestTerm } from './signals.ts';

/**
 * A budget breached: the budgeted session gets SIGTERM with the grace period (then SIGKILL,
 * by the kernel's SIGTERM timers), and ends `budget_exceeded`, taking its subtree with it.
 * Once per budget: the breach is claimed on the row, so further reports during the grace
 * period (or a second node) do not signal again.
 */

/**
 * Hold the budgets that cover a session (`scope`) to their subtree totals; `by` tipped them.
 * `seen`: those rows as an update just returned them (a superset), else they are read.
 */
export async function enforceBudgets(
  tx: WriteTx,
  core: Core,
  scope: string[],
  by: string,
  seen?: ScopeRow[],
): Promise<void> {
  const rows = seen ? seen.filter((r) => scope.includes(r.id)) : await scopeRows(tx, scope);
  for (const b of rows) {
    if (b.budget_breach !== null || b.status === 'stopped') continue;
    const spent = firstBreach(budgetOf(b) ?? {}, totalsOf(b), Number(b.created_at), null);
    if (spent) await breach(tx, core, b.id, spent, by);
  }
}

/**
 * A wall-time deadline fell due (timer or reconcile phase): breach, unless it moved on.
 * Returns the deadline if it is not due yet (a timer that fired early arms again).
 */
export async function wallDue(tx: WriteTx, core: Core, id: string): Promise<number | null> {
  const row = await sessionById(tx.db, id);
  if (!row || row.status === 'stopped' || row.budget_breach !== null) return null;
  if (row.budget_deadline === null) return null;
  if (Number(row.budget_deadline) > tx.now) return Number(row.budget_deadline);
  const max = budgetOf(row)?.wallMs;
  if (max === undefined) return null;
  const used = tx.now - Number(row.created_at);
  await breach(tx, core, id, { limit: 'wallMs', max, used, over: Math.max(0, used - max) }, KERNEL_ACTOR);
  return null;
}

export async function breach(tx: WriteTx, core: Core, id: string, spent: Breach, by: string): Promise<void> {
  const claimed = await tx.db
    .updateTable('sessions')
    .set({ budget_breach: JSON.stringify(spent), budget_deadline: null, updated_at: tx.now })
    .where('id', '=', id)
    .where('budget_breach', 'is', null)
    .where('status', '!=', 'stopped')
    .executeTakeFirst();
  if (Number(claimed.numUpdatedRows) === 0) return;
  const row = await sessionRow(tx, id);
  tx.append({
    zone: row.zone,
    type: 'budget.exceeded',
    actor: KERNEL_ACTOR,
    session_id: id,
    payload: { ...spent, by },
  });
  tx.afterCommit(() => core.effects.armBudgetDeadline(id, null));
  // A SIGTERM already running its grace period stands; it ends as budget_exceeded now.
  if (row.term_deadline !== null) return;
  if (agentLive(core, row)) {
    await requestTerm(tx, core, row, KERNEL_ACTOR, { reason: breachText(spent), budget: spent });
    return;
  }
  // Nothing live to ask (suspended, still starting): stopped now.
  logSignal(tx, row.zone, 'SIGKILL', id, KERNEL_ACTOR, {
    fallback: 'no live agent for SIGTERM',
    budget: spent,
  });
  await endSession(tx, core, id, 'budget_exceeded', KERNEL_ACTOR, { ...spent });
}

/** Timers are capped: a deadline further out than this is left to the reconcile phase. */
const MAX_TIMER_MS = 2 ** 31 - 1;

/** The wall-time deadlines of one kernel's budgets, armed as timers where possible. */
export class WallTimers {
  private readonly timers = new Map<string, TimerHandle>();

  constructor(private readonly core: Core) {}

  /** Arm (or with null, disarm) the deadline of a session. */
  arm(id: string, at: number | null): void {
    const t = this.timers.get(id);
    if (t) this.core.clock.clearTimeout(t);
    this.timers.delete(id);
    if (at === null) return;
    const ms = Math.max(0, at - this.core.clock.now());
    if (ms > MAX_TIMER_MS) return;
    this.timers.set(
      id,
      this.core.clock.setTimeout(() => {
        this.timers.delete(id);
        void this.core.store.writer
          .write((tx) => wallDue(tx, this.core, id))
          .then((early) => {
            if (early !== null && !this.timers.has(id)) this.arm(id, early);
          })
          .catch((error) =>
            console.error(`warren: the wall-time budget of ${id} failed:`, (error as Error).message),
          );
      }, ms),
    );
  }

  clearAll(): void {
    for (const t of this.timers.values()) this.core.clock.clearTimeout(t);
    this.timers.clear();
  }

  /** After a start: the live sessions with a wall-time deadline (read from its index). */
  async armAll(): Promise<void> {
    const rows = await this.core.store.reader
      .selectFrom('sessions')
      .select(['id', 'budget_deadline'])
      .where('budget_deadline', 'is not', null)
      .where('status', '!=', 'stopped')
      .execute();
    for (const r of rows) this.arm(r.id, Number(r.budget_deadline));
  }
}

/** The reconcile phase: wall-time deadlines that passed while no timer was armed. */
export async function wallPhase(core: Core, batch: number): Promise<void> {
  const due = await core.store.reader
    .selectFrom('sessions')
    .select('id')
    .where('status', '!=', 'stopped')
    .where('budget_deadline', '<=', core.clock.now())
    .limit(batch)
    .execute();
  for (const r of due) await core.store.writer.write((tx) => wallDue(tx, core, r.id));
}
