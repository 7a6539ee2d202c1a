import type { DurableAttachment } from '../../contract/plugin.ts';
import type { SyscallContext } from '../../contract/syscall.ts';
import type { FdInfo } from '../../kernel/records.ts';
import type { DeliveryMode, Permission } from '../../store/schema.ts';
import { invalid, WarrenError } from '../../vocab/errors.ts';
import { directoryOf } from './instance.ts';

/**
 * Room commands on a target: a session id, or an id a plugin gives meaning to (a task id
 * stands for its task's latest live session). A durable attachment is kept for such an id
 * by its plugin and follows it from session to session; this file applies it to the
 * session of the moment. Core never knows which plugin owns which ids.
 */

type Ctx = Pick<SyscallContext, 'kernel' | 'self' | 'principal'>;

export interface AttachRequest {
  target: string;
  stream: string;
  permission: Permission;
  mode: DeliveryMode;
  durable: boolean;
}

export interface AttachOutcome {
  /** The id as given (a session id or, say, a task id). */
  target: string;
  /** The live session attached now; null when the target has none yet (a durable pre-wire). */
  session: string | null;
  stream: string;
  fd: number | null;
  created: boolean;
  durable: boolean;
}

export async function attachTarget(
  { kernel, self, principal }: Ctx,
  r: AttachRequest,
): Promise<AttachOutcome> {
  const target = await directoryOf({ self }).target(principal.zone, r.target);
  if (!r.durable) {
    if (target?.session === null) {
      throw new WarrenError(
        'not_found',
        `${r.target} has no live session (streams attach --durable keeps the attachment until it has one)`,
        { id: r.target },
      );
    }
    const live = await kernel.roomAttach(
      principal,
      target?.session ?? r.target,
      r.stream,
      r.permission,
      r.mode,
    );
    return { ...live, target: r.target, durable: false };
  }
  if (!target?.durable) throw invalid(directoryOf({ self }).notDurable(r.target), { id: r.target });
  const room = await kernel.room(principal, r.stream);
  await target.durable.attach(principal, r.target, room, r.permission, r.mode);
  // Stored first, then resolved again: a session dispatched meanwhile either sees the row
  // (its plugin applies it) or is the one found here. Attaching twice is a no-op.
  const now = await directoryOf({ self }).target(principal.zone, r.target);
  if (!now?.session)
    return { target: r.target, session: null, stream: room.name, fd: null, created: false, durable: true };
  const live = await kernel.roomAttach(principal, now.session, room.id, r.permission, r.mode);
  return { ...live, target: r.target, durable: true };
}

export interface DetachOutcome {
  target: string;
  session: string | null;
  stream: string;
  /** Live fds closed. */
  detached: number;
  /** Whether a durable attachment was forgotten. */
  durable: boolean;
}

/** Idempotent. Detaching an id that keeps durable attachments forgets the durable one too. */
export async function detachTarget(
  { kernel, self, principal }: Ctx,
  r: { target: string; stream: string },
): Promise<DetachOutcome> {
  const target = await directoryOf({ self }).target(principal.zone, r.target);
  if (!target)
    return { ...(await kernel.roomDetach(principal, r.target, r.stream)), target: r.target, durable: false };
  let durable = false;
  let stream = r.stream;
  if (target.durable) {
    // Forgotten before the live fd closes, so no new session picks it up in between.
    const room = await kernel.room(principal, r.stream);
    durable = await target.durable.detach(principal, r.target, room.id);
    stream = room.name;
  }
  if (target.session === null) return { target: r.target, session: null, stream, detached: 0, durable };
  const live = await kernel.roomDetach(principal, target.session, r.stream);
  return { ...live, target: r.target, durable };
}

export interface TargetAttachments {
  target: string;
  session: string | null;
  /** Live room fds of the session, each marked when a durable attachment keeps it. */
  fds: Array<FdInfo & { durable: boolean }>;
  /** The durable attachments kept for the target, each marked when its session holds it now. */
  durable: Array<DurableAttachment & { applied: boolean }>;
}

export async function targetAttachments(
  { kernel, self, principal }: Ctx,
  id: string,
): Promise<TargetAttachments> {
  const target = await directoryOf({ self }).target(principal.zone, id);
  const session = target ? target.session : id;
  const fds = session === null ? [] : await kernel.attachments(principal, session);
  const kept = target?.durable ? await target.durable.list(principal.zone, id) : [];
  const held = new Set(fds.map((f) => f.streamId));
  const keeps = new Set(kept.map((d) => d.streamId));
  return {
    target: id,
    session,
    fds: fds.map((f) => ({ ...f, durable: keeps.has(f.streamId) })),
    durable: kept.map((d) => ({ ...d, applied: held.has(d.streamId) })),
  };
}
