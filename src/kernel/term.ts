import type { SessionsTable } from '../store/schema.ts';
import type { WriteTx } from '../store/writer.ts';
import type { TimerHandle } from '../util/clock.ts';
import { parseJson } from '../util/json.ts';
import { KERNEL_ACTOR } from '../vocab/principal.ts';
import type { Core } from './core.ts';
import { endSession } from './lifecycle.ts';
import { sessionRow } from './lookup.ts';
import { agentLive } from './ownership.ts';
import { logSignal, requestTerm, setTermDeadline } from './signals.ts';

export interface StopOutcome {
  signal: 'SIGTERM' | 'SIGKILL';
  /** When a SIGTERM escalates to SIGKILL; null for SIGKILL. */
  deadline: number | null;
}

/**
 * The one way to stop a session: SIGTERM when asked to be graceful and there is a live agent
 * to ask, else SIGKILL (a suspended or starting session cannot act on a request).
 */
export async function termOrKill(
  tx: WriteTx,
  core: Core,
  row: SessionsTable,
  actor: string,
  graceful: boolean,
): Promise<StopOutcome> {
  if (graceful && agentLive(core, row)) {
    return { signal: 'SIGTERM', deadline: await requestTerm(tx, core, row, actor) };
  }
  logSignal(
    tx,
    row.zone,
    'SIGKILL',
    row.id,
    actor,
    graceful ? { fallback: 'no live agent for SIGTERM' } : {},
  );
  await endSession(tx, core, row.id, 'killed', actor);
  return { signal: 'SIGKILL', deadline: null };
}

/**
 * End a session whose work is done without asking its model anything: no `[SIGTERM]` input,
 * which an LLM agent would spend a turn answering. An idle agent is asked to finish now (as
 * if it had taken a SIGTERM and ended its turn); a busy one when its turn ends. The grace
 * period, then SIGKILL, still bound it; a session with no live agent is killed at once.
 */
export async function endQuietly(
  tx: WriteTx,
  core: Core,
  row: SessionsTable,
  actor: string,
  reason: string,
): Promise<StopOutcome> {
  if (!agentLive(core, row)) return termOrKill(tx, core, row, actor, false);
  const { graceMs, deadline } = await setTermDeadline(tx, core, row.id);
  // In the log as the stop request it is; nothing on its stdin.
  logSignal(tx, row.zone, 'SIGTERM', row.id, actor, { quiet: true, reason, graceMs, deadline });
  if (row.status === 'idle') tx.afterCommit(() => core.effects.finishAgent(row.id));
  return { signal: 'SIGTERM', deadline };
}

/** The SIGTERM grace timers of one kernel: past a deadline, SIGKILL. */
export class TermTimers {
  private readonly timers = new Map<string, TimerHandle>();

  constructor(private readonly core: Core) {}

  arm(id: string, at: number): void {
    this.clear(id);
    const t = this.core.clock.setTimeout(
      () => {
        this.timers.delete(id);
        void this.escalate(id);
      },
      Math.max(0, at - this.core.clock.now()),
    );
    this.timers.set(id, t);
  }

  clear(id: string): void {
    const t = this.timers.get(id);
    if (t) this.core.clock.clearTimeout(t);
    this.timers.delete(id);
  }

  clearAll(): void {
    for (const t of this.timers.values()) this.core.clock.clearTimeout(t);
    this.timers.clear();
  }

  /** The grace period ran out: SIGKILL (unless the session stopped, or its deadline moved). */
  async escalate(id: string): Promise<void> {
    await this.core.store.writer
      .write(async (tx) => {
        const row = await sessionRow(tx, id);
        if (row.status === 'stopped' || row.term_deadline === null) return;
        // A timer may fire a millisecond before the clock reads its deadline: not yet, so again.
        if (row.term_deadline > tx.now) {
          const at = Number(row.term_deadline);
          tx.afterCommit(() => this.arm(id, at));
          return;
        }
        logSignal(tx, row.zone, 'SIGKILL', id, KERNEL_ACTOR, { escalatedFrom: 'SIGTERM' });
        // A breached budget's SIGTERM ends as what it was for.
        const breach = parseJson<Record<string, unknown> | null>(row.budget_breach, null);
        await endSession(tx, this.core, id, breach ? 'budget_exceeded' : 'killed', KERNEL_ACTOR, {
          escalatedFrom: 'SIGTERM',
          ...breach,
        });
      })
      .catch((error) =>
        this.core.log.error({ session: id, err: error }, `escalating SIGTERM of ${id} failed`),
      );
  }
}
