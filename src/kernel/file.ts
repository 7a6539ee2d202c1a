import type { DeliveryMode, FdsTable, Permission, StreamsTable } from '../store/schema.ts';
import type { WriteTx } from '../store/writer.ts';
import { forbidden, invalid, notFound, WarrenError } from '../vocab/errors.ts';
import { type Principal, principalId } from '../vocab/principal.ts';
import type { KernelContext } from './context.ts';
import { toMessageView } from './delivery.ts';
import { closeFdsCascade } from './lifecycle.ts';
import {
  closedFd,
  closedFdError,
  fdAndStream,
  liveSessionRow,
  openFdsOfOn,
  openStreamByRef,
  sessionById,
} from './lookup.ts';
import { canReanimate, inputArrived, reanimate } from './reanimate.ts';
import { canRead, canWrite, isReservedName, type MessageView, permWithin, streamInfo } from './records.ts';
import { createStream as createStreamRow, openFd, postMessage, undelivered } from './streams.ts';
import { ensureZone, isInit } from './zones.ts';

export { listFds, listStreams, type PageOptions, type StreamListing } from './listing.ts';

/** Files: what a holder does with its fds — write, read, close, grant, share (lists: listing.ts). */

export interface ReadResult {
  messages: MessageView[];
  cursor: number;
  /** True when a bounded wait ran out with nothing: call again to keep waiting. */
  timedOut: boolean;
}

export async function write(k: KernelContext, p: Principal, fd: number, text: string, data?: unknown) {
  const actor = principalId(p);
  const ref = await k.store.writer.write(
    async (tx) => {
      const { row, stream } = await fdAndStream(tx, p, fd);
      if (!canWrite(row.perm)) throw forbidden(`fd ${fd} is read-only (${row.perm})`);
      const peer = stream.kind === 'pipe' && stream.session_id !== actor ? stream.session_id : null;
      const child = peer ? await sessionById(tx.db, peer) : undefined;
      // Like EPIPE: nobody will ever read this pipe, so nothing is written.
      if (child?.status === 'stopped') {
        throw new WarrenError(
          'peer_gone',
          `session ${child.id} has stopped (${child.end_reason}); nothing reads its pipe${canReanimate(child) ? ' — open it (session open) to reanimate it first' : ''}`,
          { session: child.id, endReason: child.end_reason },
        );
      }
      const ref = postMessage(tx, stream, actor, { text, ...(data !== undefined ? { data } : {}) });
      if (child) {
        // Up to here the unit only read and appended; input to a child may change its status.
        await tx.isolate();
        await inputArrived(tx, k, child, p);
      }
      return ref;
    },
    { readsFirst: true },
  );
  return { seq: ref.seq };
}

/**
 * Read what is due on an fd and move its cursor. With `wait`, block until something
 * arrives or a bounded time passes (then `timedOut`: call again).
 */
export async function read(
  k: KernelContext,
  p: Principal,
  fd: number,
  /** `peek`: return what is due without moving the cursor (a sync spawn's copy of the output). */
  opts: { wait?: boolean; waitMs?: number; limit?: number; peek?: boolean; signal?: AbortSignal } = {},
): Promise<ReadResult> {
  const holder = principalId(p);
  const row = await k.store.reader
    .selectFrom('fds')
    .selectAll()
    .where('zone', '=', p.zone)
    .where('holder', '=', holder)
    .where('num', '=', fd)
    .where('closed_at', 'is', null)
    .executeTakeFirst();
  if (!row) throw (await closedFdError(k.store.reader, p.zone, holder, fd)) ?? notFound('fd', fd);
  if (!canRead(row.perm)) throw forbidden(`fd ${fd} is write-only`);
  const selfEcho = k.fdTable.stream(row.stream_id)?.selfEcho ?? false;
  const limit = Math.max(1, Math.min(1000, opts.limit ?? 100));
  const waitMs = Math.min(opts.waitMs ?? k.config.maxWaitMs, k.config.maxWaitMs);
  const deadline = k.clock.now() + waitMs;
  for (;;) {
    // Listening before the log is read: what is fanned out while the read is in flight wakes us.
    const waiter = opts.wait ? k.delivery.listen(row.id) : undefined;
    try {
      const cursor = k.fdTable.cursor(row.id, Number(row.cursor));
      const due = await k.store.log.messagesAfter(row.stream_id, cursor, limit);
      const mine = due.filter((e) => selfEcho || e.actor !== holder);
      const last = due.at(-1);
      // A read acknowledges what it returns: the caller has it in hand.
      if (last && !opts.peek) k.fdTable.ack(row.id, last.seq);
      const left = deadline - k.clock.now();
      if (mine.length > 0 || !opts.wait || left <= 0 || opts.signal?.aborted) {
        return {
          messages: mine.map(toMessageView),
          cursor: k.fdTable.cursor(row.id, Number(row.cursor)),
          timedOut: mine.length === 0 && opts.wait === true,
        };
      }
      if (last) continue; // only our own echoes were due; look again at once
      await waiter!.wait(left, opts.signal);
    } finally {
      waiter?.close();
    }
    if (!k.fdTable.get(row.id)) throw notFound('fd', fd);
  }
}

export async function close(k: KernelContext, p: Principal, fd: number, opts: { force?: boolean } = {}) {
  const actor = principalId(p);
  return k.store.writer.write(async (tx) => {
    // Closed already (a kill of the session behind it closes its operators' fds): done.
    if (!(await openFdExists(tx, p, fd))) {
      const closed = await closedFd(tx.db, p.zone, actor, fd);
      if (closed) return { fd, closed: true, alreadyClosed: true, undelivered: 0, reaped: [] as string[] };
    }
    const { row, stream } = await fdAndStream(tx, p, fd, { reservedOk: true });
    const n = await undelivered(tx.db, k.fdTable, row, stream.self_echo === 1);
    if (n > 0 && !opts.force) {
      throw new WarrenError(
        'undelivered_messages',
        `fd ${fd} has ${n} undelivered message${n === 1 ? '' : 's'}; read them first, or close with force`,
        { fd, undelivered: n },
      );
    }
    const reaped = await closeFdsCascade(tx, k, [row], {
      actor,
      reason: 'closed',
      ...(n > 0 ? { forced: true, undelivered: n } : {}),
    });
    return { fd, closed: true, alreadyClosed: false, undelivered: n, reaped };
  });
}

async function openFdExists(tx: WriteTx, p: Principal, fd: number): Promise<boolean> {
  const row = await tx.db
    .selectFrom('fds')
    .select('id')
    .where('zone', '=', p.zone)
    .where('holder', '=', principalId(p))
    .where('num', '=', fd)
    .where('closed_at', 'is', null)
    .executeTakeFirst();
  return row !== undefined;
}

export async function createStream(k: KernelContext, p: Principal, name: string, selfEcho = false) {
  if (isReservedName(name))
    throw new WarrenError(
      'reserved_name',
      'stream names starting with pipe:, lifecycle: or stdin: are reserved',
    );
  const actor = principalId(p);
  return k.store.writer.write(async (tx) => {
    await ensureZone(tx, p.zone);
    if (p.kind === 'session') await liveSessionRow(tx, p.sessionId);
    const stream = await createStreamRow(tx, k.ids, {
      zone: p.zone,
      name,
      kind: 'named',
      owner: actor,
      selfEcho,
      actor,
    });
    // The creator's anchor: an operator's room lives with no agent in it.
    const fd = await openFd(tx, k.ids, {
      zone: p.zone,
      holder: actor,
      stream,
      perm: 'rw',
      mode: p.kind === 'operator' ? 'detach' : 'async',
      actor,
    });
    return { stream: streamInfo(stream), fd: fd.num };
  });
}

/** Grant another session onto a stream you hold, with at most your permission. */
export async function attach(
  k: KernelContext,
  p: Principal,
  fd: number,
  target: string,
  permission: Permission,
  deliveryMode: DeliveryMode,
) {
  const actor = principalId(p);
  return k.store.writer.write(async (tx) => {
    const { row, stream } = await fdAndStream(tx, p, fd);
    if (!permWithin(permission, row.perm)) {
      throw forbidden(`cannot grant ${permission}: you hold only ${row.perm} on fd ${fd}`);
    }
    const targetRow = await liveSessionRow(tx, target);
    if (targetRow.zone !== p.zone) throw notFound('session', target);
    const granted = await openFd(tx, k.ids, {
      zone: p.zone,
      holder: target,
      stream,
      perm: permission,
      mode: deliveryMode,
      actor,
    });
    // A new subscriber on a session's lifecycle: open is reanimate.
    if (stream.kind === 'lifecycle' && stream.session_id) {
      const subject = await sessionById(tx.db, stream.session_id);
      if (subject?.status === 'suspended') await reanimate(tx, k, subject, actor, 'lifecycle attached');
    }
    return { fd: granted.num, stream: stream.name, target };
  });
}

/** Share a stream with your parent and tell it so with a [stream-ref] notice on its stdin. */
export async function share(
  k: KernelContext,
  p: Principal,
  ref: { fd?: number; streamName?: string },
  permission: Permission = 'rw',
  deliveryMode: DeliveryMode = 'async',
) {
  if (p.kind !== 'session') throw forbidden('only a session has a parent to share with');
  return k.store.writer.write(async (tx) => {
    const me = await liveSessionRow(tx, p.sessionId);
    let row: FdsTable;
    let stream: StreamsTable;
    if (ref.fd !== undefined) ({ row, stream } = await fdAndStream(tx, p, ref.fd));
    else if (ref.streamName) {
      stream = await openStreamByRef(tx, p.zone, ref.streamName);
      const [held] = await openFdsOfOn(tx, p.sessionId, stream.id);
      if (!held) throw forbidden(`you hold no fd on ${ref.streamName}`);
      row = held;
    } else throw invalid('give fd or streamName');
    // Whichever way it is named (fd 0/1/2 are reserved streams too), plumbing is not shared.
    if (isReservedName(stream.name))
      throw new WarrenError('reserved_name', `${stream.name} is reserved plumbing; it cannot be shared`);
    if (!permWithin(permission, row.perm))
      throw forbidden(`cannot grant ${permission}: you hold only ${row.perm}`);
    if (!me.parent_id || isInit(me.parent_id))
      throw forbidden('your parent is init; there is nobody to share with');
    const parent = await liveSessionRow(tx, me.parent_id);
    const granted = await openFd(tx, k.ids, {
      zone: p.zone,
      holder: parent.id,
      stream,
      perm: permission,
      mode: deliveryMode,
      actor: p.sessionId,
    });
    const stdin = await openStreamByRef(tx, p.zone, `stdin:${parent.id}`);
    postMessage(
      tx,
      stdin,
      p.sessionId,
      {
        text: `[stream-ref] ${p.sessionId} shared stream "${stream.name}" with you as fd ${granted.num} (${permission}, ${deliveryMode}).`,
        data: {
          streamId: stream.id,
          stream: stream.name,
          fd: granted.num,
          permission,
          deliveryMode,
          from: p.sessionId,
        },
      },
      parent.id,
    );
    return { parent: parent.id, parentFd: granted.num, stream: stream.name };
  });
}
