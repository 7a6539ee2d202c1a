import type { WriteTx } from '../store/writer.ts';
import { WarrenError } from '../vocab/errors.ts';
import { type Principal, principalId } from '../vocab/principal.ts';
import type { KernelContext } from './context.ts';
import type { Core } from './core.ts';
import { controllable } from './lookup.ts';
import { isInit } from './zones.ts';

/**
 * Nothing grows forever: stopped sessions and closed streams leave the tables (with their
 * fds and cursors) when deleted or when retention says so. The log keeps what its own
 * retention allows; a deleted session's history stays readable there until then.
 */

/** Delete one stopped session, bottom-up like rmdir: refused while it has children rows. */
export async function deleteSession(k: KernelContext, p: Principal, id: string) {
  return k.store.writer.write(async (tx) => {
    const row = await controllable(tx.db, p, id);
    if (row.status !== 'stopped') {
      throw new WarrenError('conflict', `session ${id} is ${row.status}; stop it (kill) before deleting it`, {
        id,
      });
    }
    const kids = await tx.db
      .selectFrom('sessions')
      .select('id')
      .where('parent_id', '=', id)
      .limit(5)
      .execute();
    if (kids.length > 0) {
      throw new WarrenError(
        'conflict',
        `session ${id} still has children (${kids.map((c) => c.id).join(', ')}${kids.length === 5 ? ', …' : ''}); delete them first`,
        { id, children: kids.map((c) => c.id) },
      );
    }
    await removeSession(tx, id, principalId(p));
    return { id, deleted: true };
  });
}

/** The rows of a stopped, childless session: its plumbing, fds, process records, itself. */
async function removeSession(tx: WriteTx, id: string, actor: string): Promise<void> {
  const row = await tx.db
    .selectFrom('sessions')
    .select(['zone'])
    .where('id', '=', id)
    .executeTakeFirstOrThrow();
  const streams = await tx.db.selectFrom('streams').select('id').where('session_id', '=', id).execute();
  const streamIds = streams.map((s) => s.id);
  if (streamIds.length > 0) {
    await tx.db
      .deleteFrom('fds')
      .where('stream_id', 'in', streamIds)
      .where('closed_at', 'is not', null)
      .execute();
    await tx.db
      .deleteFrom('streams')
      .where('id', 'in', streamIds)
      .where('closed_at', 'is not', null)
      .where(({ not, exists, selectFrom }) =>
        not(exists(selectFrom('fds').select('fds.id').whereRef('fds.stream_id', '=', 'streams.id'))),
      )
      .execute();
  }
  await tx.db.deleteFrom('fds').where('holder', '=', id).where('closed_at', 'is not', null).execute();
  await tx.db.deleteFrom('agent_procs').where('session_id', '=', id).execute();
  await tx.db.deleteFrom('sessions').where('id', '=', id).execute();
  tx.append({ zone: row.zone, type: 'session.deleted', actor, session_id: id, payload: {} });
}

const BATCH = 500;

/**
 * The retention phase for rows: stopped sessions ended longer ago than the configured age
 * (leaves first, so a tree goes bottom-up over ticks) and closed streams nobody holds.
 * Costs what is due: both selects are index ranges on the end/close time.
 */
export async function retireRows(core: Core, actor: string): Promise<{ sessions: number; streams: number }> {
  const days = core.config.sessionRetentionDays;
  if (days === null) return { sessions: 0, streams: 0 };
  const cutoff = core.clock.now() - days * 86_400_000;
  const total = { sessions: 0, streams: 0 };
  // Batches of 500 rows, as many as a tick needs to keep up with the churn (up to a bound,
  // so one tick never holds the writer for long): what is due, not everything there is.
  for (let i = 0; i < MAX_BATCHES_PER_TICK; i++) {
    const done = await retireBatch(core, actor, cutoff);
    total.sessions += done.sessions;
    total.streams += done.streams;
    if (done.sessions < BATCH && done.streams < BATCH) break;
  }
  return total;
}

const MAX_BATCHES_PER_TICK = 20;

async function retireBatch(
  core: Core,
  actor: string,
  cutoff: number,
): Promise<{ sessions: number; streams: number }> {
  const due = await core.store.reader
    .selectFrom('sessions')
    .select('id')
    .where('status', '=', 'stopped')
    .where('ended_at', '<', cutoff)
    .where(({ not, exists, selectFrom }) =>
      not(exists(selectFrom('sessions as c').select('c.id').whereRef('c.parent_id', '=', 'sessions.id'))),
    )
    .limit(BATCH)
    .execute();
  const rooms = await core.store.reader
    .selectFrom('streams')
    .select('id')
    .where('closed_at', '<', cutoff)
    // Rooms, and plumbing whose session is already gone (a holder kept it open past the delete).
    .where(({ or, eb, not, exists, selectFrom }) =>
      or([
        eb('session_id', 'is', null),
        not(
          exists(
            selectFrom('sessions').select('sessions.id').whereRef('sessions.id', '=', 'streams.session_id'),
          ),
        ),
      ]),
    )
    .limit(BATCH)
    .execute();
  if (due.length === 0 && rooms.length === 0) return { sessions: 0, streams: 0 };
  await core.store.writer.write(async (tx) => {
    for (const { id } of due) if (!isInit(id)) await removeSession(tx, id, actor);
    const roomIds = rooms.map((r) => r.id);
    if (roomIds.length > 0) {
      await tx.db
        .deleteFrom('fds')
        .where('stream_id', 'in', roomIds)
        .where('closed_at', 'is not', null)
        .execute();
      await tx.db.deleteFrom('streams').where('id', 'in', roomIds).execute();
    }
  });
  return { sessions: due.length, streams: rooms.length };
}
