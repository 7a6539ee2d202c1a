import type { Db } from './lookup.ts';

/** A session and a room (a stream) it should hold an fd on. */
export interface SessionRoom {
  session: string;
  stream: string;
}

/** Pairs looked at in one round of reads (each read binds at most this many ids twice). */
const BATCH = 250;

/**
 * Of `pairs`, those whose session is live and whose stream is open but on which the session
 * holds no open fd: the attachments a plugin that keeps durable ones still has to make.
 * Three reads by key per batch (sessions, streams, the holders' fds), costing the pairs.
 */
export async function unheldRooms(db: Db, pairs: readonly SessionRoom[]): Promise<SessionRoom[]> {
  const out: SessionRoom[] = [];
  for (let i = 0; i < pairs.length; i += BATCH) {
    const batch = pairs.slice(i, i + BATCH);
    const sessions = [...new Set(batch.map((p) => p.session))];
    const streams = [...new Set(batch.map((p) => p.stream))];
    const live = new Set(
      (
        await db
          .selectFrom('sessions')
          .select('id')
          .where('id', 'in', sessions)
          .where('status', '!=', 'stopped')
          .execute()
      ).map((r) => r.id),
    );
    const open = new Set(
      (
        await db
          .selectFrom('streams')
          .select('id')
          .where('id', 'in', streams)
          .where('closed_at', 'is', null)
          .execute()
      ).map((r) => r.id),
    );
    const held = new Set(
      (
        await db
          .selectFrom('fds')
          .select(['holder', 'stream_id'])
          .where('holder', 'in', sessions)
          .where('stream_id', 'in', streams)
          .where('closed_at', 'is', null)
          .execute()
      ).map((r) => `${r.holder}\n${r.stream_id}`),
    );
    for (const p of batch) {
      if (live.has(p.session) && open.has(p.stream) && !held.has(`${p.session}\n${p.stream}`)) out.push(p);
    }
  }
  return out;
}

/** The names of the streams of `ids` that exist (open or closed), by id. */
export async function streamNamesById(db: Db, ids: readonly string[]): Promise<Map<string, string>> {
  const unique = [...new Set(ids)];
  const out = new Map<string, string>();
  for (let i = 0; i < unique.length; i += BATCH) {
    const rows = await db
      .selectFrom('streams')
      .select(['id', 'name'])
      .where('id', 'in', unique.slice(i, i + BATCH))
      .execute();
    for (const r of rows) out.set(r.id, r.name);
  }
  return out;
}
