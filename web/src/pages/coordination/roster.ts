import type { LogEvent, Session, Stream, Subscriber } from '../../lib/types.ts';
import type { Inventory } from './model.ts';

/** The events that change the inventory: rooms, members, sessions, tasks. */
export const ROSTER_EVENTS =
  /^(stream\.(created|closed)|fd\.(opened|closed|moved)|session\.(spawned|status|deleted)|task\.)/;

const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/**
 * Applies roster events to the inventory in place of a refetch: each event carries what
 * changed (docs/events.md), so an idle tab at 1,000 sessions moves a few hundred bytes per
 * event instead of the whole inventory. Task events only say which task changed: the caller
 * reads the task list again for them.
 */
export function applyRoster(inv: Inventory, events: LogEvent[]): Inventory {
  let sessions = inv.sessions;
  let streams = inv.streams;
  const editSessions = (fn: (m: Map<string, Session>) => void) => {
    const m = new Map(sessions.map((s) => [s.id, s]));
    fn(m);
    sessions = [...m.values()];
  };
  const editStream = (id: string | null, fn: (s: Stream) => Stream) => {
    // An event without its stream (should not happen) is looked for in every stream.
    streams = streams.map((s) => (id === null || s.id === id ? fn(s) : s));
  };
  const withSubs = (fn: (subs: Subscriber[]) => Subscriber[]) => (s: Stream) => ({
    ...s,
    subscribers: fn(s.subscribers),
  });
  for (const e of events) {
    const p = e.payload;
    switch (e.type) {
      case 'session.spawned':
        editSessions((m) => {
          const id = e.session_id;
          if (!id || m.has(id)) return;
          m.set(id, {
            id,
            zone: e.zone,
            parentId: str(p.parent),
            depth: Number(p.depth ?? 0),
            status: 'pending',
            endReason: null,
            endDetail: null,
            activity: null,
            suspendReason: null,
            runtime: String(p.runtime ?? ''),
            title: str(p.title),
            lastMessage: null,
            turns: 0,
            usage: {},
            subtreeUsage: {},
            createdAt: e.ts,
            updatedAt: e.ts,
            endedAt: null,
          });
        });
        break;
      case 'session.status':
        editSessions((m) => {
          const s = e.session_id ? m.get(e.session_id) : undefined;
          const to = str(p.to);
          if (!s || !to) return;
          // The same fields the server's row would give (status.ts, lifecycle.ts write them).
          const stopped = to === 'stopped';
          m.set(s.id, {
            ...s,
            status: to,
            updatedAt: e.ts,
            endedAt: stopped ? e.ts : s.endedAt,
            endReason: stopped ? str(p.endReason) : s.endReason,
            suspendReason: to === 'suspended' ? (str(p.reason) ?? 'suspended') : null,
          });
        });
        break;
      case 'session.deleted':
        editSessions((m) => {
          if (e.session_id) m.delete(e.session_id);
        });
        break;
      case 'stream.created':
        if (e.stream_id && !streams.some((s) => s.id === e.stream_id))
          streams = [
            ...streams,
            {
              id: e.stream_id,
              name: String(p.name ?? e.stream_id),
              kind: String(p.kind ?? 'named'),
              owner: String(p.owner ?? e.actor),
              sessionId: e.session_id,
              createdAt: e.ts,
              closedAt: null,
              subscribers: [],
            },
          ];
        break;
      case 'stream.closed':
        streams = streams.filter((s) => s.id !== e.stream_id);
        break;
      case 'fd.opened': {
        const row = p.row as Record<string, unknown> | undefined;
        const id = str(row?.id);
        if (!row || !id) break;
        const sub: Subscriber = {
          fd: Number(row.num),
          id,
          holder: String(row.holder),
          permission: String(row.perm),
          deliveryMode: String(row.mode),
        };
        editStream(
          str(row.stream_id) ?? e.stream_id,
          withSubs((subs) => [...subs.filter((x) => x.id !== id), sub]),
        );
        break;
      }
      case 'fd.closed':
        editStream(
          e.stream_id,
          withSubs((subs) => subs.filter((x) => x.id !== p.fdId)),
        );
        break;
      case 'fd.moved':
        editStream(
          e.stream_id,
          withSubs((subs) =>
            subs.map((x) =>
              x.id === p.fdId ? { ...x, holder: String(p.to), fd: Number(p.num ?? x.fd) } : x,
            ),
          ),
        );
        break;
    }
  }
  return { ...inv, sessions, streams };
}
