import type { EndReason, FdsTable, SessionsTable, StreamsTable } from '../store/schema.ts';
import type { WriteTx } from '../store/writer.ts';
import { WarrenError } from '../vocab/errors.ts';
import { KERNEL_ACTOR } from '../vocab/principal.ts';
import { type BudgetLimit, breachText } from './budget.ts';
import type { Core } from './core.ts';
import { nextFdNum, openFdsOf, openFdsOn, sessionById, sessionRow } from './lookup.ts';
import { notifyParent, requestTerm, sendSignal } from './signals.ts';
import { closeFdRow, closeStreamRow, undelivered } from './streams.ts';
import { initIdOf, isInit } from './zones.ts';

/**
 * How sessions end, and the fd model running downhill: ending a session closes its fds,
 * closing the last fd that holds a session reaps it, reaping closes its fds in turn.
 * endSession and closeFdsCascade call each other, so they live in one file.
 */

/** The endings a session reaches by itself; its children are handed up, not taken along. */
const NATURAL_ENDS: ReadonlySet<EndReason> = new Set([
  'completed',
  'crashed',
  'expired',
  'budget_exceeded',
  'terminated',
]);

/**
 * The one way a session stops. Killed and reaped sessions take down what they own (the
 * cascade); sessions that end on their own hand their live children to their parent.
 */
export async function endSession(
  tx: WriteTx,
  core: Core,
  id: string,
  reason: EndReason,
  actor: string,
  detail: Record<string, unknown> = {},
): Promise<boolean> {
  if (isInit(id)) throw new WarrenError('forbidden', 'init never ends');
  const row = await sessionRow(tx, id);
  if (row.status === 'stopped') return false;
  const patch = {
    status: 'stopped' as const,
    end_reason: reason,
    end_detail: describeEnd(reason, actor, detail),
    activity: null,
    ended_at: tx.now,
    updated_at: tx.now,
    term_deadline: null,
    budget_deadline: null,
  };
  await tx.db.updateTable('sessions').set(patch).where('id', '=', id).execute();
  tx.append({
    zone: row.zone,
    type: 'session.status',
    actor,
    session_id: id,
    payload: { from: row.status, to: 'stopped', endReason: reason, ...detail },
  });
  tx.afterCommit(() => {
    core.effects.stopAgent(id);
    if (row.budget_deadline !== null) core.effects.armBudgetDeadline(id, null);
  });

  // A breached budget covered the whole subtree: it goes too, however the session ended.
  if (NATURAL_ENDS.has(reason) && row.budget_breach === null) await handOffChildren(tx, core, row, reason);
  else {
    // Kill and reap: tear down the streams it owns (its children's plumbing, rooms it made).
    const owned = await tx.db
      .selectFrom('streams')
      .selectAll()
      .where('owner', '=', id)
      .where('closed_at', 'is', null)
      .execute();
    for (const s of owned) await tearDownStream(tx, core, s, actor, `owner ${id} ${reason}`, false);
  }
  await closeFdsCascade(tx, core, await openFdsOf(tx, id), { actor, reason: `session ${reason}` });
  await releaseOperatorHandles(tx, core, row, reason, actor);
  await notifyParent(tx, { ...row, ...patch });
  return true;
}

/**
 * Operators do not wait(2) for the sessions they spawn: when one stops, their lifecycle fd
 * on it closes, and their pipe fd too unless replies are still unread there (a natural end
 * leaves them to read; a kill or reap drops them, logged as forced).
 */
async function releaseOperatorHandles(
  tx: WriteTx,
  core: Core,
  row: SessionsTable,
  reason: EndReason,
  actor: string,
): Promise<void> {
  const held = await tx.db
    .selectFrom('fds')
    .innerJoin('streams', 'streams.id', 'fds.stream_id')
    .selectAll('fds')
    .select(['streams.kind as stream_kind', 'streams.self_echo as stream_self_echo'])
    .where('streams.session_id', '=', row.id)
    .where('streams.kind', 'in', ['lifecycle', 'pipe'])
    .where('fds.closed_at', 'is', null)
    .where('fds.holder', 'like', 'operator:%')
    .execute();
  for (const { stream_kind, stream_self_echo, ...fd } of held) {
    const n = await undelivered(tx.db, core.fdTable, fd, stream_self_echo === 1);
    if (n > 0 && stream_kind === 'pipe' && NATURAL_ENDS.has(reason)) continue;
    await closeFdsCascade(tx, core, [fd], {
      actor,
      reason: `session ${row.id} ${reason}`,
      ...(n > 0 ? { forced: true, undelivered: n } : {}),
    });
  }
}

/** Why a session ended, in words read after its end reason (`killed: by operator:admin`). */
export function describeEnd(
  reason: EndReason,
  actor: string,
  detail: Record<string, unknown>,
): string | null {
  const error = typeof detail.error === 'string' ? detail.error : null;
  switch (reason) {
    case 'completed':
      return null;
    case 'crashed':
      return error ?? (typeof detail.code === 'number' ? `exited with code ${detail.code}` : 'crashed');
    case 'killed':
      if (detail.escalatedFrom === 'SIGTERM') return 'still running when its SIGTERM grace period ran out';
      if (detail.parentClose === 'terminate') return `its parent ${String(detail.parent)} ended`;
      return `by ${actor}`;
    case 'terminated':
      // An agent that ended sooner than its turn would have says why (claude-code retrying).
      return error ? `it stopped after SIGTERM: ${error}` : 'it stopped after SIGTERM';
    case 'expired':
      return 'its time to live ran out';
    case 'budget_exceeded':
      if (typeof detail.limit === 'string')
        return breachText({
          limit: detail.limit as BudgetLimit,
          max: Number(detail.max),
          used: Number(detail.used),
        });
      return `its turn budget (${String(detail.maxTurns ?? '?')}) was spent`;
    case 'reaped':
      return 'nobody holds it any more';
  }
}

/** Children of a session that ended on its own: reparent (default), terminate, or SIGTERM each. */
async function handOffChildren(
  tx: WriteTx,
  core: Core,
  dead: SessionsTable,
  reason: EndReason,
): Promise<void> {
  const children = await tx.db
    .selectFrom('sessions')
    .selectAll()
    .where('parent_id', '=', dead.id)
    .where('status', '!=', 'stopped')
    .execute();
  if (children.length === 0) return;
  const adopter = await adopterOf(tx, dead);
  for (const child of children) {
    if (child.parent_close === 'terminate') {
      await endSession(tx, core, child.id, 'killed', KERNEL_ACTOR, {
        parentClose: 'terminate',
        parent: dead.id,
      });
      continue;
    }
    await adopt(tx, child, dead, adopter, reason);
    if (child.parent_close === 'sigterm') await requestTerm(tx, core, child, KERNEL_ACTOR);
  }
}

async function adopterOf(tx: WriteTx, dead: SessionsTable): Promise<SessionsTable> {
  if (dead.parent_id) {
    const parent = await sessionById(tx.db, dead.parent_id);
    if (parent && parent.status !== 'stopped') return parent;
  }
  return sessionRow(tx, initIdOf(dead.zone));
}

/** Move the dead parent's fds on the child's streams, and the streams themselves, to the adopter. */
async function adopt(
  tx: WriteTx,
  child: SessionsTable,
  from: SessionsTable,
  to: SessionsTable,
  reason: EndReason,
): Promise<void> {
  const streams = await tx.db
    .selectFrom('streams')
    .selectAll()
    .where('session_id', '=', child.id)
    .where('closed_at', 'is', null)
    .execute();
  const moved: Record<string, number> = {};
  for (const s of streams) {
    if (s.owner === from.id)
      await tx.db.updateTable('streams').set({ owner: to.id }).where('id', '=', s.id).execute();
    for (const fd of await openFdsOn(tx, s.id)) {
      if (fd.holder !== from.id) continue;
      const num = await nextFdNum(tx, to.zone, to.id);
      await tx.db.updateTable('fds').set({ holder: to.id, num }).where('id', '=', fd.id).execute();
      tx.append({
        zone: fd.zone,
        type: 'fd.moved',
        actor: KERNEL_ACTOR,
        stream_id: s.id,
        session_id: to.id,
        payload: { fdId: fd.id, from: from.id, to: to.id, num },
      });
      moved[s.kind] = num;
    }
  }
  await tx.db
    .updateTable('sessions')
    .set({ parent_id: to.id, updated_at: tx.now })
    .where('id', '=', child.id)
    .execute();
  tx.append({
    zone: child.zone,
    type: 'session.reparented',
    actor: KERNEL_ACTOR,
    session_id: child.id,
    payload: { from: from.id, to: to.id, reason },
  });
  await sendSignal(tx, child.zone, to.id, 'ADOPTED', {
    child: child.id,
    title: child.title,
    from: from.id,
    reason,
    lifecycleFd: moved.lifecycle,
    pipeFd: moved.pipe,
  });
}

/**
 * Close fds, then reap every session nobody holds any more, and close streams nobody
 * holds. Reaping closes the reaped session's fds in turn: the cascade runs downhill.
 */
export async function closeFdsCascade(
  tx: WriteTx,
  core: Core,
  fds: FdsTable[],
  how: { actor: string; reason: string; forced?: boolean; undelivered?: number },
): Promise<string[]> {
  const reaped: string[] = [];
  const touched = new Set<string>();
  for (const fd of fds) {
    await closeFdRow(tx, fd, how);
    touched.add(fd.stream_id);
  }
  for (const streamId of touched) {
    const stream = await tx.db
      .selectFrom('streams')
      .selectAll()
      .where('id', '=', streamId)
      .executeTakeFirst();
    if (!stream || stream.closed_at !== null) continue;
    const open = await openFdsOn(tx, streamId);
    if (open.length === 0) await closeStreamRow(tx, stream, how.actor, 'no fds left');
    if (stream.session_id && (stream.kind === 'lifecycle' || stream.kind === 'pipe')) {
      const owner = stream.session_id;
      if (!isInit(owner) && !(await isHeld(tx, owner))) {
        if (await endSession(tx, core, owner, 'reaped', how.actor, { lastFdClosedBy: how.actor }))
          reaped.push(owner);
      }
    }
  }
  return reaped;
}

/** Alive means held: someone other than the session holds an fd on its lifecycle or pipe. */
export async function isHeld(tx: WriteTx, sessionId: string): Promise<boolean> {
  const row = await tx.db
    .selectFrom('fds')
    .innerJoin('streams', 'streams.id', 'fds.stream_id')
    .select('fds.id')
    .where('streams.session_id', '=', sessionId)
    .where('streams.kind', 'in', ['lifecycle', 'pipe'])
    .where('fds.closed_at', 'is', null)
    .where('fds.holder', '!=', sessionId)
    .executeTakeFirst();
  return row !== undefined;
}

/** Evict every subscriber and close the stream. */
export async function tearDownStream(
  tx: WriteTx,
  core: Core,
  stream: StreamsTable,
  actor: string,
  reason: string,
  checkUndelivered: boolean,
): Promise<string[]> {
  const fds = await openFdsOn(tx, stream.id);
  let dropped = 0;
  for (const fd of fds) {
    const n = await undelivered(tx.db, core.fdTable, fd, stream.self_echo === 1);
    if (n > 0 && checkUndelivered) {
      throw new WarrenError(
        'undelivered_messages',
        `fd ${fd.num} of ${fd.holder} has ${n} undelivered messages`,
        {
          holder: fd.holder,
          undelivered: n,
        },
      );
    }
    dropped += n;
  }
  // Closing over undelivered messages is a forced close, and the log says so.
  const reaped: string[] = [];
  for (const fd of fds) {
    const n = dropped > 0 ? await undelivered(tx.db, core.fdTable, fd, stream.self_echo === 1) : 0;
    reaped.push(
      ...(await closeFdsCascade(tx, core, [fd], {
        actor,
        reason,
        ...(n > 0 ? { forced: true, undelivered: n } : {}),
      })),
    );
  }
  await closeStreamRow(tx, stream, actor, reason);
  return reaped;
}
