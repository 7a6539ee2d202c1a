import type { DeliveryMode, Permission } from '../store/schema.ts';
import { forbidden, notFound } from '../vocab/errors.ts';
import { type Principal, principalId } from '../vocab/principal.ts';
import type { KernelContext } from './context.ts';
import { createStream, listFds } from './file.ts';
import { closeFdsCascade, tearDownStream } from './lifecycle.ts';
import { liveSessionRow, namedStream, openFdsOfOn, openFdsOn } from './lookup.ts';
import { type FdInfo, isReservedName, type StreamInfo, streamInfo } from './records.ts';
import { openFd } from './streams.ts';
import { isInit } from './zones.ts';

/** The operator control plane: rooms driven from outside, with no fd of an agent's. */

export function roomCreate(k: KernelContext, p: Principal, name: string, selfEcho = false) {
  if (p.kind !== 'operator') throw forbidden('rooms are created by operators; agents use ipc_create_stream');
  return createStream(k, p, name, selfEcho);
}

/** An open room of the caller's zone, by id or name (never reserved plumbing). */
export async function room(k: KernelContext, p: Principal, streamRef: string): Promise<StreamInfo> {
  if (p.kind !== 'operator') throw forbidden('rooms are looked up by operators');
  return streamInfo(await namedStream({ db: k.store.reader }, p.zone, streamRef));
}

export async function roomAttach(
  k: KernelContext,
  p: Principal,
  sessionId: string,
  streamRef: string,
  permission: Permission = 'rw',
  mode: DeliveryMode = 'async',
) {
  const actor = principalId(p);
  return k.store.writer.write(async (tx) => {
    const stream = await namedStream(tx, p.zone, streamRef);
    const target = await liveSessionRow(tx, sessionId);
    if (target.zone !== p.zone) throw notFound('session', sessionId);
    if (isInit(sessionId)) throw forbidden('init cannot be attached to rooms');
    const [existing] = await openFdsOfOn(tx, sessionId, stream.id);
    if (existing) return { session: sessionId, stream: stream.name, fd: existing.num, created: false };
    const fd = await openFd(tx, k.ids, {
      zone: p.zone,
      holder: sessionId,
      stream,
      perm: permission,
      mode,
      actor,
    });
    return { session: sessionId, stream: stream.name, fd: fd.num, created: true };
  });
}

/**
 * The operator opens an fd of its own (rw, detach) on any room of its zone, so it can post
 * there: a room an agent made holds no operator fd. Idempotent: an open one is returned.
 */
export async function roomJoin(k: KernelContext, p: Principal, streamRef: string) {
  if (p.kind !== 'operator') throw forbidden('rooms are joined by operators; agents are attached');
  const holder = principalId(p);
  return k.store.writer.write(async (tx) => {
    const stream = await namedStream(tx, p.zone, streamRef);
    const [existing] = await openFdsOfOn(tx, holder, stream.id);
    if (existing) return { stream: stream.name, fd: existing.num, created: false };
    const fd = await openFd(tx, k.ids, {
      zone: p.zone,
      holder,
      stream,
      perm: 'rw',
      mode: 'detach',
      actor: holder,
    });
    return { stream: stream.name, fd: fd.num, created: true };
  });
}

/** Idempotent: detaching what is not attached is not an error. */
export async function roomDetach(k: KernelContext, p: Principal, sessionId: string, streamRef: string) {
  const actor = principalId(p);
  return k.store.writer.write(async (tx) => {
    const stream = await namedStream(tx, p.zone, streamRef);
    const fds = await openFdsOfOn(tx, sessionId, stream.id);
    await closeFdsCascade(tx, k, fds, { actor, reason: 'detached by operator' });
    return { session: sessionId, stream: stream.name, detached: fds.length };
  });
}

export async function attachments(k: KernelContext, p: Principal, sessionId: string): Promise<FdInfo[]> {
  const fds = await listFds(k, { kind: 'operator', name: 'view', zone: p.zone }, sessionId);
  return fds.filter((f) => !isReservedName(f.streamName));
}

/** Evict every subscriber and remove the room. */
export async function roomClose(
  k: KernelContext,
  p: Principal,
  streamRef: string,
  opts: { force?: boolean } = {},
) {
  const actor = principalId(p);
  return k.store.writer.write(async (tx) => {
    const stream = await namedStream(tx, p.zone, streamRef);
    const evicted = (await openFdsOn(tx, stream.id)).map((r) => r.holder);
    const reaped = await tearDownStream(tx, k, stream, actor, 'closed by operator', !opts.force);
    return { stream: stream.name, id: stream.id, evicted, reaped };
  });
}
