import type { SessionsTable } from '../store/schema.ts';
import type { WriteTx } from '../store/writer.ts';
import { KERNEL_ACTOR } from '../vocab/principal.ts';
import type { Core } from './core.ts';
import { sessionIn } from './lookup.ts';
import { postMessage } from './streams.ts';
import { isInit } from './zones.ts';

export const SIGNALS = ['SIGTERM', 'SIGKILL', 'SIGCHLD', 'SIGSTOP', 'SIGCONT', 'ADOPTED', 'TASK'] as const;
export type SignalName = (typeof SIGNALS)[number];

/** What an LLM agent reads: a short tagged line. The structured fields travel alongside. */
export function signalText(signal: SignalName, f: Record<string, unknown>): string {
  switch (signal) {
    case 'SIGTERM':
      return `[SIGTERM] Stop requested${f.by ? ` by ${f.by}` : ''}${f.reason ? `: ${f.reason}` : ''}. Finish what you are doing, close the fds you own, and stop. You will be killed in ${Math.round(Number(f.graceMs ?? 0) / 1000)}s otherwise.`;
    case 'SIGCHLD': {
      const last = f.lastMessage ? ` Last message: ${truncate(String(f.lastMessage), 500)}` : '';
      const reason = f.endReason
        ? ` (${f.endReason}${f.endDetail ? `: ${truncate(String(f.endDetail), 300)}` : ''})`
        : '';
      return `[SIGCHLD] Child ${f.child}${f.title ? ` "${f.title}"` : ''} is ${f.status}${reason}.${last}`;
    }
    case 'ADOPTED':
      // A session's adoption hands over its fds; a task's (orchestration) has none to hand.
      return `[ADOPTED] You adopted ${f.child}${f.title ? ` "${f.title}"` : ''}: its parent ${f.from} ended (${f.reason}).${f.lifecycleFd !== undefined ? ` Its fds are now yours (lifecycle fd ${f.lifecycleFd}${f.pipeFd !== undefined ? `, pipe fd ${f.pipeFd}` : ''}).` : ''}`;
    case 'SIGSTOP':
      return '[SIGSTOP] Suspended.';
    case 'SIGCONT':
      return '[SIGCONT] Resumed.';
    case 'SIGKILL':
      return '[SIGKILL] Killed.';
    case 'TASK':
      return taskText(f);
  }
}

const truncate = (s: string, n: number) => (s.length > n ? `${s.slice(0, n)}…` : s);

/** Most characters of a `[TASK]` line's title, and of its text (result, reason or question). */
export const TASK_TITLE_CHARS = 120;
export const TASK_TEXT_CHARS = 500;

/**
 * `[TASK] <task id> "<title>" <status>: <text>` — one line: whitespace runs (newlines too)
 * become one space; a title past 120 characters and a text past 500 are cut, a cut text ending
 * `… (task_show <id>: N chars)` so the reader knows where the whole of it is.
 */
function taskText(f: Record<string, unknown>): string {
  const line = (v: unknown) =>
    String(v ?? '')
      .replace(/\s+/g, ' ')
      .trim();
  const title = truncate(line(f.title).replaceAll('"', "'"), TASK_TITLE_CHARS);
  const text = line(f.text);
  const shown =
    text.length > TASK_TEXT_CHARS
      ? `${text.slice(0, TASK_TEXT_CHARS)}… (task_show ${f.task}: ${text.length} chars)`
      : text;
  return `[TASK] ${f.task} "${title}" ${f.status}: ${shown || '(no text)'}`;
}

/** Record a signal in the log. */
export function logSignal(
  tx: WriteTx,
  zone: string,
  signal: SignalName,
  target: string,
  actor: string,
  fields: Record<string, unknown> = {},
) {
  tx.append({ zone, type: 'signal', actor, session_id: target, payload: { signal, target, ...fields } });
}

/**
 * Deliver a signal as a message on the target's stdin stream, written in the same
 * transaction as the change that caused it: it is neither lost nor repeated by a restart.
 */
export async function sendSignal(
  tx: WriteTx,
  zone: string,
  target: string,
  signal: SignalName,
  fields: Record<string, unknown>,
  actor = KERNEL_ACTOR,
): Promise<void> {
  logSignal(tx, zone, signal, target, actor, fields);
  const stdin = await tx.db
    .selectFrom('streams')
    .selectAll()
    .where('zone', '=', zone)
    .where('name', '=', `stdin:${target}`)
    .where('closed_at', 'is', null)
    .executeTakeFirst();
  if (!stdin) return;
  postMessage(
    tx,
    stdin,
    actor,
    { text: signalText(signal, fields), kind: 'signal', signal, data: fields },
    target,
  );
}

/** SIGCHLD: wake the parent with the child's id, status and last message. */
export async function notifyParent(tx: WriteTx, child: SessionsTable): Promise<void> {
  if (!child.parent_id) return;
  // A plugin tells the parent about this one in its own terms (a task's `[TASK]` outcome).
  if (child.reported_by) return;
  // init consumes its SIGCHLDs and nobody waits on them: an ordinary turn of a top-level
  // session (idle) would be one more event per turn for no reader. Stops are still recorded.
  if (child.status === 'idle' && isInit(child.parent_id)) return;
  const parent = await sessionIn(tx, child.parent_id);
  if (!parent || parent.status === 'stopped') return;
  await sendSignal(tx, child.zone, parent.id, 'SIGCHLD', {
    child: child.id,
    title: child.title,
    status: child.status,
    endReason: child.end_reason,
    endDetail: child.end_detail,
    lastMessage: child.last_message,
  });
}

/** SIGTERM: a stop request the agent can act on, escalated to SIGKILL after the grace period. */
export async function requestTerm(
  tx: WriteTx,
  core: Core,
  row: SessionsTable,
  actor: string,
  /** More for the signal to say (`reason`: why, in words). */
  fields: Record<string, unknown> = {},
): Promise<number> {
  const { graceMs, deadline } = await setTermDeadline(tx, core, row.id);
  await sendSignal(tx, row.zone, row.id, 'SIGTERM', { by: actor, graceMs, deadline, ...fields }, actor);
  return deadline;
}

/** A stop's grace: the session's term deadline, written now and armed once the unit commits. */
export async function setTermDeadline(
  tx: WriteTx,
  core: Core,
  id: string,
): Promise<{ graceMs: number; deadline: number }> {
  const graceMs = core.config.termGraceMs;
  const deadline = tx.now + graceMs;
  await tx.db
    .updateTable('sessions')
    .set({ term_deadline: deadline, updated_at: tx.now })
    .where('id', '=', id)
    .execute();
  tx.afterCommit(() => {
    core.effects.armTermDeadline(id, deadline);
    // A busy agent takes the SIGTERM at its next safe point; one that can tell nothing in
    // progress could finish (claude-code waiting to retry its model API) ends now instead.
    core.effects.termAgent(id);
  });
  return { graceMs, deadline };
}
