import type { Core } from '../../src/kernel/core.ts';
import { Delivery } from '../../src/kernel/delivery.ts';
import { FdTable } from '../../src/kernel/fdtable.ts';
import { soloNode } from '../../src/kernel/node.ts';
import type { LogEvent } from '../../src/store/events.ts';
import type { FdsTable } from '../../src/store/schema.ts';
import { type Clock, systemClock } from '../../src/util/clock.ts';

const quiet = { error() {}, warn() {}, info() {}, debug() {} };

/** A message on the rig's stream (`str_1`), as the log holds it. */
export const streamMessage = (seq: number, actor: string): LogEvent =>
  ({
    seq,
    type: 'stream.message',
    stream_id: 'str_1',
    actor,
    payload: { text: `m${seq}` },
  }) as unknown as LogEvent;

/**
 * The kernel's delivery with nothing else of a kernel: one async fd (`f1`) of `holder` on
 * `str_1`, whose log holds `backlog` (what an agent of the session is handed when it starts).
 */
export function deliveryRig(opts: { holder: string; backlog?: LogEvent[]; clock?: Clock }) {
  const clock = opts.clock ?? systemClock;
  const backlog = opts.backlog ?? [];
  const fd = {
    id: 'f1',
    holder: opts.holder,
    num: 1,
    stream_id: 'str_1',
    perm: 'rw',
    mode: 'async',
    cursor: 0,
  };
  const store = {
    log: { messagesAfter: async (_s: string, after: number) => backlog.filter((e) => e.seq > after) },
    // The acknowledged cursors' flush (a minute after an ack) has no database to write to here:
    // without a writer it failed in whatever test ran a minute later in the same process.
    writer: { write: async () => {} },
  };
  const core = { log: quiet, store, clock, observers: [], node: soloNode('test') } as unknown as Core;
  const fdTable = new FdTable(store as never, clock, 60_000, quiet);
  fdTable.apply([{ type: 'fd.opened', payload: { row: fd as unknown as FdsTable } } as unknown as LogEvent]);
  (core as { fdTable: FdTable }).fdTable = fdTable;
  return { delivery: new Delivery(core), fdTable };
}

/** The kernel's idle report, as far as delivery goes (kernel/reports.ts): the turn ends, what it took is acknowledged. */
export function idleReported(delivery: Delivery, sessionId: string): void {
  const took = delivery.turnEnding(sessionId);
  delivery.safePoint(sessionId);
  delivery.turnRecorded(sessionId, took);
}
