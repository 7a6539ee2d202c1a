import { z } from 'zod';
import * as s from '../../contract/schemas.ts';
import type { Kernel } from '../../kernel/kernel.ts';
import { WarrenError } from '../../vocab/errors.ts';
import type { Principal } from '../../vocab/principal.ts';
import { spawnInput } from '../core/ipc.ts';
import { taskCreate } from '../orchestration/syscalls.ts';

/** What a fire does: create a task from a template, spawn a session (a persona), or write to a stream. */

/** task_create's own input: the template is checked by the syscall it becomes. */
export const taskTemplate = taskCreate.input;
/** ipc_spawn's input, less what a fire sets itself (its idempotency key). */
export const spawnTemplate = spawnInput.omit({ idempotencyKey: true });
export const streamMessage = z.object({
  stream: s.streamRef.max(200).describe('A stream you hold with w or rw (name or id)'),
  message: z.string().min(1).max(64_000),
});

export type ScheduleAction =
  | { kind: 'task'; task: z.input<typeof taskTemplate> }
  | { kind: 'spawn'; spawn: z.input<typeof spawnTemplate> }
  | { kind: 'stream'; stream: z.output<typeof streamMessage> };

/** A fire's result: done now (`ok`), or a task or session to follow until it is done. */
export type ActionResult = { status: 'ok'; target: null } | { status: 'running'; target: string };

export type Call = (p: Principal, name: string, input: unknown) => Promise<unknown>;

/** The caller's fd on `stream` that it may write with. */
export async function writableFd(kernel: Kernel, p: Principal, stream: string): Promise<number> {
  const fds = await kernel.listFds(p, undefined, { limit: 1000 });
  const fd = fds.find(
    (f) =>
      (f.streamName === stream || f.streamId === stream) && (f.permission === 'w' || f.permission === 'rw'),
  );
  if (!fd) {
    throw new WarrenError(
      'invalid_input',
      `stream: you hold no fd on ${JSON.stringify(stream)} to write with`,
      {
        field: 'stream',
      },
    );
  }
  return fd.fd;
}

/**
 * Do it, as the schedule's owner, through the one dispatch path (gating included). A spawn
 * carries the fire's id as its idempotency key, so a fire run again after a crash spawns once.
 */
export async function runAction(
  kernel: Kernel,
  call: Call,
  owner: Principal,
  action: ScheduleAction,
  fireId: string,
): Promise<ActionResult> {
  switch (action.kind) {
    case 'task': {
      const r = (await call(owner, 'task_create', action.task)) as { task: { id: string } };
      return { status: 'running', target: r.task.id };
    }
    case 'spawn': {
      const r = (await call(owner, 'ipc_spawn', {
        ...action.spawn,
        idempotencyKey: `schedule:${fireId}`,
      })) as {
        session: { id: string };
      };
      return { status: 'running', target: r.session.id };
    }
    case 'stream': {
      const fd = await writableFd(kernel, owner, action.stream.stream);
      await call(owner, 'ipc_write', { fd, message: action.stream.message });
      return { status: 'ok', target: null };
    }
  }
}

/** Whether what a fire started is done: null while it runs, else whether it went well. */
export async function targetDone(
  kernel: Kernel,
  call: Call,
  owner: Principal,
  action: ScheduleAction,
  target: string,
): Promise<{ ok: boolean; detail: string } | null> {
  try {
    if (action.kind === 'task') {
      const r = (await call(owner, 'task_show', { id: target })) as { task: { status: string } };
      const st = r.task.status;
      if (st === 'complete') return { ok: true, detail: st };
      if (st === 'failed' || st === 'cancelled') return { ok: false, detail: `task ${st}` };
      return null;
    }
    const session = await kernel.session(owner, target);
    // An idle session has finished its turn: it no longer overlaps the next fire.
    if (session.status === 'stopped' || session.status === 'idle') {
      const reason = session.endReason;
      const ok = reason === null || reason === 'completed';
      return { ok, detail: reason ? `session ${reason}` : `session ${session.status}` };
    }
    return null;
  } catch (error) {
    // Gone (deleted) or no longer visible to its owner: it runs no more.
    if ((error as { code?: string }).code === 'not_found') return { ok: false, detail: 'target gone' };
    throw error;
  }
}
