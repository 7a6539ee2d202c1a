import { readSession } from '../../lib/api.ts';
import { type Loaded, useLiveWindow, withReads } from '../../lib/liveWindow.ts';
import type { Session } from '../../lib/types.ts';

/** Events are gathered this long from the first, then the sessions they name are read once each. */
const WINDOW_MS = 250;

/** Each session with its ancestors: a turn, a usage report or an ending moves their subtree totals. */
function withAncestors(gathered: Map<string, string>, data: Session[] | null): Map<string, string> {
  const byId = new Map((data ?? []).map((s) => [s.id, s]));
  const want = new Map<string, string>();
  for (const [id, zone] of gathered) {
    let at: string | null = id;
    for (let hops = 0; at && hops < 64 && !want.has(at); hops++) {
      want.set(at, byId.get(at)?.zone ?? zone);
      at = byId.get(at)?.parentId ?? null;
    }
  }
  return want;
}

/**
 * Keeps a loaded session list current from the live stream (useLiveWindow): the sessions a
 * window of `session.*` events names are read again alone, with their ancestors; one a read no
 * longer finds is dropped.
 */
export function useLiveSessionRows(rows: Loaded<Session[]>): void {
  useLiveWindow(
    rows,
    {
      match: (e) => (e.type.startsWith('session.') && e.session_id ? e.session_id : undefined),
      widen: withAncestors,
      read: readSession,
      apply: (data, reads) => withReads(data ?? [], reads),
    },
    WINDOW_MS,
  );
}
