import type { Kernel } from '../../kernel/kernel.ts';
import type { SessionState } from '../../kernel/session-state.ts';
import { adoptChildren } from './adopt.ts';
import { openEscalation, withdrawEscalations } from './escalations.ts';
import { reportTask } from './report.ts';
import type { TaskStatus, TasksTable, Tx } from './schema.ts';
import { isDone, openChildren, transition } from './tasks.ts';

/**
 * A task's status follows its latest session: running while it runs; idle with a result
 * (and no open child task, and no input due) → review or complete; stopped on its own →
 * complete (or review); stopped any other way → failed with the reason.
 */

/** What the plugin acts as (and is logged as) when no caller stands behind a change. */
export const ACTOR = 'operator:orchestration';

/** The state of a task's session, in the unit (none: no session yet, or it is gone). */
export async function sessionOf(
  tx: Tx,
  kernel: Kernel,
  id: string | null,
): Promise<SessionState | undefined> {
  return id ? kernel.sessionStateIn(tx, id) : undefined;
}

/**
 * Move a running or in-review task along with its session. `pending`: the idle session has
 * input due. A waiting task (an open escalation) holds: nothing its session does moves it.
 */
export async function follow(tx: Tx, kernel: Kernel, t: TasksTable, pending: boolean): Promise<void> {
  if (t.status === 'waiting') return;
  const s = await sessionOf(tx, kernel, t.session_id);
  if (!s) {
    // Retention removed it (its task was never told), or the row was edited by hand.
    if (t.status === 'running')
      await finish(tx, kernel, t, 'failed', { reason: 'its session is gone', actor: ACTOR });
    return;
  }
  if (s.status === 'stopped') {
    if (t.status === 'review') return; // an operator decides
    if (s.endReason === 'completed') {
      await finish(tx, kernel, t, t.review === 1 ? 'review' : 'complete', {
        result: s.lastMessage,
        actor: ACTOR,
      });
    } else {
      const reason = `session ${s.endReason}${s.endDetail ? `: ${s.endDetail}` : ''}`;
      await finish(tx, kernel, t, 'failed', { reason, actor: ACTOR, session: s });
    }
    return;
  }
  if (s.status === 'idle') {
    if (t.status !== 'running' || s.lastMessage === null || pending) return;
    // An orchestrator idles between its children's SIGCHLDs: it is done when its subtree is.
    if ((await openChildren(tx.db, t.id)) > 0) return;
    await finish(tx, kernel, t, t.review === 1 ? 'review' : 'complete', {
      result: s.lastMessage,
      actor: ACTOR,
    });
    return;
  }
  // Running again (an operator's answer to a review, say): so is the task.
  if ((s.status === 'running' || s.status === 'pending') && t.status === 'review') {
    await transition(tx, t, { to: 'running', actor: ACTOR, reason: null });
  }
}

/**
 * A task reaches review or a final status, and its lead hears it (`[TASK]`, report.ts).
 * Complete and failed hand their open children up; every final status ends the task's
 * session so nothing idles forever — complete and failed without a word to its agent (it
 * has nothing left to do: no `[SIGTERM]` turn), cancelled with SIGTERM (it may be mid-work);
 * the kernel's grace, then SIGKILL, bound both. A failure the task escalates opens an
 * escalation. All in one transaction.
 */
export async function finish(
  tx: Tx,
  kernel: Kernel,
  t: TasksTable,
  to: TaskStatus,
  how: { reason?: string | null; result?: string | null; actor: string; session?: SessionState },
): Promise<TasksTable> {
  const next = await transition(tx, t, {
    to,
    actor: how.actor,
    ...(how.reason !== undefined
      ? { reason: how.reason }
      : to === 'complete' || to === 'review'
        ? { reason: null }
        : {}),
    ...(how.result !== undefined ? { result: how.result } : {}),
  });
  if (to === 'review') await reportTask(tx, kernel, next, 'review', next.result, how.actor);
  if (!isDone(to)) return next;
  if (to !== 'failed') await withdrawEscalations(tx, t, how.actor, `the task is ${to}`);
  if (to !== 'cancelled') await adoptChildren(tx, kernel, next, how.actor);
  if (next.session_id) await stopSession(tx, kernel, next, how.actor);
  let escalation: string | null = null;
  if (to === 'failed' && t.on_failure === 'escalate') {
    const s = how.session ?? (await sessionOf(tx, kernel, t.session_id));
    escalation = await openEscalation(tx, kernel.ids, {
      zone: t.zone,
      taskId: t.id,
      sessionId: null,
      question: `Task "${t.title}" failed (${how.reason ?? 'no reason given'}). Retry it, or say what to do instead.`,
      context: {
        reason: how.reason ?? null,
        attempt: Number(t.attempts),
        session: s?.id ?? null,
        endReason: s?.endReason ?? null,
        endDetail: s?.endDetail ?? null,
        lastMessage: s?.lastMessage ?? null,
      },
      actor: 'kernel',
    });
  }
  const text =
    to === 'complete'
      ? next.result
      : `${next.reason ?? 'no reason given'}${escalation ? ` (escalated to the operator: ${escalation})` : ''}`;
  await reportTask(tx, kernel, next, to as 'complete' | 'failed' | 'cancelled', text, how.actor);
  return next;
}

/** A done task's session ends: quietly once its work is over, with SIGTERM when cancelled. */
async function stopSession(tx: Tx, kernel: Kernel, t: TasksTable, actor: string): Promise<void> {
  if (!t.session_id) return;
  if (t.status === 'cancelled') await kernel.stopIn(tx, t.session_id, actor, true);
  else await kernel.stopIn(tx, t.session_id, actor, true, { quiet: true, reason: `its task is ${t.status}` });
}

/** A task that is done: its session ended, its open children handed up (the backstop's repairs). */
export async function settleDone(tx: Tx, kernel: Kernel, t: TasksTable): Promise<void> {
  if (t.status !== 'cancelled') await adoptChildren(tx, kernel, t, ACTOR);
  await stopSession(tx, kernel, t, ACTOR);
}
