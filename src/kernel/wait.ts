import type { TimerHandle } from '../util/clock.ts';
import type { Principal } from '../vocab/principal.ts';
import type { KernelContext } from './context.ts';
import { childOf } from './lookup.ts';
import { session } from './proc.ts';
import { canRead } from './records.ts';

export interface WaitResult {
  session: string;
  status: string;
  endReason: string | null;
  lastMessage: string | null;
  timedOut: boolean;
}

/**
 * Wait (bounded) until a child is idle with nothing pending, or stopped. Returns at once
 * when it already is; otherwise on its next status change, or `timedOut` — call again.
 */
export async function waitChild(
  k: KernelContext,
  p: Principal,
  ref: { fd?: number; session?: string },
  /** `capMs`: the bound instead of maxWaitMs (a sync spawn's syncSpawnWaitMs). */
  opts: { waitMs?: number; capMs?: number; signal?: AbortSignal } = {},
): Promise<WaitResult> {
  // A check, not a change: the reader answers it without taking the writer.
  const id = await childOf(k.store.reader, p, ref);
  // Input written before this call must have been taken, and its turn ended.
  const mark = await k.store.log.head();
  const cap = opts.capMs ?? k.config.maxWaitMs;
  const deadline = k.clock.now() + Math.min(opts.waitMs ?? cap, cap);
  let wake: () => void = () => {};
  const unsubscribe = k.store.writer.onAnyCommit((events) => {
    if (events.some((e) => e.session_id === id && e.type === 'session.status')) wake();
  });
  const unTurn = k.delivery.onTurnRecorded((sid) => {
    if (sid === id) wake();
  });
  const abort = () => wake();
  opts.signal?.addEventListener('abort', abort);
  try {
    for (;;) {
      // Armed before looking, so a change between the look and the wait is not missed.
      const changed = new Promise<void>((resolve) => {
        wake = resolve;
      });
      const s = await session(k, p, id);
      const settled =
        s.status === 'stopped' || (s.status === 'idle' && !(await hasUntakenInput(k, id, mark)));
      const left = deadline - k.clock.now();
      if (settled || left <= 0 || opts.signal?.aborted) {
        return {
          session: id,
          status: s.status,
          endReason: s.endReason,
          lastMessage: s.lastMessage,
          timedOut: !settled,
        };
      }
      let timer: TimerHandle | undefined;
      // Another node runs it: the turn's acknowledgement reaches this node only as a flushed
      // cursor (no event), so look again shortly rather than only on the next event.
      const nap = elsewhere(k, id) ? Math.min(left, REMOTE_RECHECK_MS) : left;
      await Promise.race([
        changed,
        new Promise<void>((r) => (timer = k.clock.setTimeout(r, nap, { keepAlive: true }))),
      ]);
      if (timer) k.clock.clearTimeout(timer);
    }
  } finally {
    unsubscribe();
    unTurn();
    opts.signal?.removeEventListener('abort', abort);
  }
}

/** Whether input up to `mark` on a session's async fds is still unacknowledged (not yet taken by a finished turn). */
export async function hasUntakenInput(k: KernelContext, id: string, mark: number): Promise<boolean> {
  const persisted = await persistedCursors(k, id);
  for (const fd of k.fdTable.heldBy(id)) {
    if (fd.mode !== 'async' || !canRead(fd.perm)) continue;
    const acked = Math.max(k.fdTable.acked(fd.id), persisted.get(fd.id) ?? 0);
    if (acked >= mark) continue;
    const selfEcho = k.fdTable.stream(fd.stream_id)?.selfEcho ?? false;
    let q = k.store.reader
      .selectFrom('events')
      .select('seq')
      .where('stream_id', '=', fd.stream_id)
      .where('type', '=', 'stream.message')
      .where('seq', '>', acked)
      .where('seq', '<=', mark);
    if (!selfEcho) q = q.where('actor', '!=', id);
    if (await q.limit(1).executeTakeFirst()) return true;
  }
  return false;
}

/** How often a wait on a session another node runs looks at its cursors again. */
const REMOTE_RECHECK_MS = 100;

const elsewhere = (k: KernelContext, id: string) =>
  k.node.clustered && !k.supervisor.has(id) && !k.supervisor.isStarting(id);

/**
 * The session's cursors as another node last flushed them: this node's fd index only knows
 * the acknowledgements it made itself. Alone (or running it here), nothing to read.
 */
async function persistedCursors(k: KernelContext, id: string): Promise<Map<string, number>> {
  if (!elsewhere(k, id)) return new Map();
  const rows = await k.store.reader
    .selectFrom('fds')
    .select(['id', 'cursor'])
    .where('holder', '=', id)
    .where('closed_at', 'is', null)
    .execute();
  return new Map(rows.map((r) => [r.id, Number(r.cursor)]));
}
