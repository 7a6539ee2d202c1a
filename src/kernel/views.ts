import type { LogEvent } from '../store/events.ts';
import type { EventQuery } from '../store/log.ts';
import { forbidden, notFound } from '../vocab/errors.ts';
import type { Principal } from '../vocab/principal.ts';
import { canReadStream, readableSession } from './access.ts';
import type { KernelContext } from './context.ts';
import { toMessageView } from './delivery.ts';
import { streamInfo } from './records.ts';

/** Views of the action log: by session, by zone, by stream. */

export async function sessionEvents(
  k: KernelContext,
  p: Principal,
  id: string,
  opts: { from?: number; limit?: number },
): Promise<LogEvent[]> {
  await readableSession(k.store.reader, p, id);
  return k.store.log.sessionEvents(id, opts);
}

/**
 * The caller's own log, oldest first after a cursor (`after`, exclusive): an operator's is
 * its zone's, a session's is the events about itself — what the live stream (follow.ts)
 * shows each of them. Page on with the last seq seen.
 */
export function ownLog(
  k: KernelContext,
  p: Principal,
  opts: { after?: number; limit?: number } = {},
): Promise<LogEvent[]> {
  const after = opts.after ?? 0;
  if (p.kind === 'operator') return k.store.log.tail(after, { zone: p.zone, limit: opts.limit });
  return k.store.log.sessionEvents(p.sessionId, { from: after, limit: opts.limit });
}

export function events(k: KernelContext, p: Principal, q: Omit<EventQuery, 'zone'>): Promise<LogEvent[]> {
  return k.store.log.events({ ...q, zone: p.zone });
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
