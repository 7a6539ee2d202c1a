import type { SessionsTable, StreamsTable } from '../store/schema.ts';
import { forbidden } from '../vocab/errors.ts';
import type { Principal } from '../vocab/principal.ts';
import { type Db, sessionById, sessionInZone } from './lookup.ts';

/**
 * The read matrix: what a caller may look at. Operators read their whole zone. A session
 * reads itself and its descendants (their rows, logs and plumbing) and the streams it holds
 * an open fd on; never its parent, its siblings or another zone. Siblings talk through
 * streams their parent shares, not by reading each other's logs: a sibling's log holds what
 * an operator said to it alone.
 */

/** True when `id` is `ancestor` or below it. Walks up from `row` (depth-bounded). */
async function isWithin(db: Db, row: SessionsTable, ancestor: string): Promise<boolean> {
  let cur: SessionsTable | undefined = row;
  while (cur) {
    if (cur.id === ancestor) return true;
    if (!cur.parent_id) return false;
    cur = await sessionById(db, cur.parent_id);
  }
  return false;
}

/** A session the caller may read (show, log, wait on), or `forbidden` / `not_found`. */
export async function readableSession(db: Db, p: Principal, id: string): Promise<SessionsTable> {
  const row = await sessionInZone(db, p, id);
  if (p.kind === 'operator') return row;
  if (await isWithin(db, row, p.sessionId)) return row;
  throw forbidden(
    `${id} is not ${p.sessionId} or one of its descendants: a session reads only its own subtree`,
  );
}

/**
 * Whether the caller may read a stream's transcript: an operator in its zone; a session that
 * holds an open fd on it now (a member that left, or was evicted, reads no further), or
 * whose subtree the stream's plumbing belongs to.
 */
export async function canReadStream(db: Db, p: Principal, stream: StreamsTable): Promise<boolean> {
  if (stream.zone !== p.zone) return false;
  if (p.kind === 'operator') return true;
  const holds = await db
    .selectFrom('fds')
    .select('id')
    .where('holder', '=', p.sessionId)
    .where('stream_id', '=', stream.id)
    .where('closed_at', 'is', null)
    .executeTakeFirst();
  if (holds) return true;
  if (!stream.session_id) return false;
  const owner = await sessionById(db, stream.session_id);
  return owner !== undefined && (await isWithin(db, owner, p.sessionId));
}
