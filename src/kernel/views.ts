import type { LogEvent } from '../store/events.ts';
import type { EventQuery } from '../store/log.ts';
import { forbidden, notFound } from '../vocab/errors.ts';
import type { Principal } from '../vocab/principal.ts';
import { canReadStream, readableSession } from './access.ts';
import type { KernelContext } from './context.ts';
import { toMessageView } from './delivery.ts';
import { withInputText } from './input-record.ts';
import { streamInfo } from './records.ts';

/** Views of the action log: by session, by zone, by stream. */

export async function sessionEvents(
  k: KernelContext,
  p: Principal,
  id: string,
  opts: { from?: number; limit?: number },
): Promise<LogEvent[]> {
  await readableSession(k.store.reader, p, id);
  return withInputText(k.store.reader, await k.store.log.sessionEvents(id, opts));
}

/**
 * The caller's own log, oldest first after a cursor (`after`, exclusive): an operator's is
 * its zone's, a session's is the events about itself — what the live stream (follow.ts)
 * shows each of them. Page on with the last seq seen.
 */
export async function ownLog(
  k: KernelContext,
  p: Principal,
  opts: { after?: number; limit?: number } = {},
): Promise<LogEvent[]> {
  const after = opts.after ?? 0;
  const rows =
    p.kind === 'operator'
      ? await k.store.log.tail(after, { zone: p.zone, limit: opts.limit })
      : await k.store.log.sessionEvents(p.sessionId, { from: after, limit: opts.limit });
  return withInputText(k.store.reader, rows);
}

/** A cursor given as an event's id (what listings show) is that event's seq, in the caller's zone. */
async function seqOf(
  k: KernelContext,
  p: Principal,
  at: number | string | undefined,
): Promise<number | undefined> {
  if (typeof at !== 'string') return at;
  const row = await k.store.reader
    .selectFrom('events')
    .select('seq')
    .where('id', '=', at.toUpperCase())
    .where('zone', '=', p.zone)
    .executeTakeFirst();
  if (!row) throw notFound('event', at);
  return Number(row.seq);
}

export type EventsQuery = Omit<EventQuery, 'zone' | 'before' | 'after'> & {
  before?: number | string;
  after?: number | string;
};

export async function events(k: KernelContext, p: Principal, q: EventsQuery): Promise<LogEvent[]> {
  const before = await seqOf(k, p, q.before);
  const after = await seqOf(k, p, q.after);
  const { before: _b, after: _a, ...rest } = q;
  const query: EventQuery = {
    ...rest,
    zone: p.zone,
    ...(before !== undefined ? { before } : {}),
    ...(after !== undefined ? { after } : {}),
  };
  return withInputText(k.store.reader, await k.store.log.events(query));
}

export async function transcript(
  k: KernelContext,
  p: Principal,
  streamRef: string,
  opts: { before?: number; limit?: number },
) {
  const stream = await k.store.reader
    .selectFrom('streams')
    .selectAll()
    .where('zone', '=', p.zone)
    .where((eb) => eb.or([eb('id', '=', streamRef), eb('name', '=', streamRef)]))
    .orderBy('created_at', 'desc')
    .executeTakeFirst();
  if (!stream) throw notFound('stream', streamRef);
  if (!(await canReadStream(k.store.reader, p, stream))) {
    throw forbidden(`you hold no fd on ${stream.name}, and it is no plumbing of yours or your descendants'`);
  }
  const events = await k.store.log.transcript(stream.id, opts);
  return { stream: streamInfo(stream), messages: events.map(toMessageView) };
}
