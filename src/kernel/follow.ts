import type { LogEvent } from '../store/events.ts';
import type { Store } from '../store/store.ts';
import type { Principal } from '../vocab/principal.ts';
import { withInputText } from './input-record.ts';

export interface FollowFilter {
  type?: string;
  session?: string;
  stream?: string;
}

export interface FollowOptions {
  /** Ends the iteration (the caller went away). */
  signal?: AbortSignal;
  /** Live events held for a slow reader before it is sent back to the log instead. */
  maxBuffered?: number;
  /** Rows per catch-up read. */
  page?: number;
}

/**
 * The log from `after` on (default: from now), then every commit as it lands, as one
 * ordered iteration: no gap and no repeat at the seam between catch-up and live. A reader
 * that falls more than `maxBuffered` events behind is not cut off and does not grow memory:
 * the buffer is dropped and it catches up from the log again. Operators see their zone;
 * a session sees its own events. Ends when `signal` aborts.
 */
export async function* follow(
  store: Store,
  principal: Principal,
  filter: FollowFilter,
  after: number | undefined,
  opts: FollowOptions = {},
): AsyncGenerator<LogEvent, void, undefined> {
  const { signal } = opts;
  const maxBuffered = opts.maxBuffered ?? 10_000;
  const page = opts.page ?? 1000;
  const visible = (e: LogEvent) =>
    e.zone === principal.zone &&
    (principal.kind === 'operator' || e.session_id === principal.sessionId) &&
    (!filter.type || e.type === filter.type) &&
    (!filter.session || e.session_id === filter.session) &&
    (!filter.stream || e.stream_id === filter.stream);

  let buffered: LogEvent[] = [];
  // Set when live events were dropped: everything past the cursor must come from the log.
  let dropped = false;
  let wake: (() => void) | undefined;
  const unsubscribe = store.writer.onAnyCommit((events) => {
    if (dropped) return;
    buffered.push(...events);
    if (buffered.length > maxBuffered) {
      buffered = [];
      dropped = true;
    }
    wake?.();
  });
  const onAbort = () => wake?.();
  signal?.addEventListener('abort', onAbort);
  try {
    // Subscribed before reading the head: a commit in between is buffered, not missed.
    let cursor = after ?? (await store.log.head());
    dropped = true;
    for (;;) {
      while (dropped) {
        // Read the log until it has nothing more; commits meanwhile are buffered again.
        dropped = false;
        buffered = [];
        for (;;) {
          const rows = await store.log.tail(cursor, { limit: page, zone: principal.zone });
          for (const e of await withInputText(store.reader, rows.filter(visible))) {
            if (signal?.aborted) return;
            yield e;
          }
          // Past the page's last row, visible or not.
          const last = rows.at(-1);
          if (last) cursor = last.seq;
          if (rows.length < page) break;
        }
      }
      const batch = buffered.filter((e) => e.seq > cursor);
      buffered = [];
      // What is shown, an input given its text back (it names its messages: input-record.ts).
      const shown = new Map(
        (await withInputText(store.reader, batch.filter(visible))).map((e) => [e.seq, e]),
      );
      for (const e of batch) {
        if (signal?.aborted || dropped) break;
        if (e.seq <= cursor) continue;
        cursor = e.seq;
        const out = shown.get(e.seq);
        if (out) yield out;
      }
      if (signal?.aborted) return;
      if (!dropped && buffered.length === 0) await new Promise<void>((r) => (wake = r));
      wake = undefined;
    }
  } finally {
    unsubscribe();
    signal?.removeEventListener('abort', onAbort);
  }
}
