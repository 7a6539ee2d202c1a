import type { Principal } from '../vocab/principal.ts';
import type { KernelContext } from './context.ts';
import { read } from './file.ts';
import type { MessageView } from './records.ts';
import { waitChild } from './wait.ts';

/**
 * What `ipc_spawn` with `pipe: 'sync'` answers besides the handle (seed 000: a sync spawn
 * blocks until the child finishes). Bounded by `syncSpawnWaitMs`, below MCP clients' request
 * timeout: a child that is not done by then is left running, and `next` says how to wait on.
 */
export interface SyncResult {
  /** The child is idle with nothing pending, or stopped: its outcome below is final for this turn. */
  finished: boolean;
  status: string;
  endReason: string | null;
  lastMessage: string | null;
  /**
   * What it wrote on its pipe so far, as a copy: the pipe's cursor does not move, so an
   * `ipc_read` on pipeFd still returns them (scripts and agents that read after keep working).
   */
  output: MessageView[];
  /** What to do next, in words an agent can follow. */
  next: string;
}

/**
 * Wait (event-driven: the kernel's own child wait, no polling) for the child behind `pipeFd`,
 * at most `waitMs` and never past syncSpawnWaitMs; then copy its pipe output.
 */
export async function syncResult(
  k: KernelContext,
  p: Principal,
  fds: { pipeFd: number; lifecycleFd: number },
  opts: { waitMs?: number; signal?: AbortSignal } = {},
): Promise<SyncResult> {
  const cap = k.config.syncSpawnWaitMs;
  const w = await waitChild(
    k,
    p,
    { fd: fds.lifecycleFd },
    {
      waitMs: Math.min(opts.waitMs ?? cap, cap),
      capMs: cap,
      ...(opts.signal ? { signal: opts.signal } : {}),
    },
  );
  const out = await read(k, p, fds.pipeFd, { peek: true, limit: 1000 });
  const finished = !w.timedOut;
  return {
    finished,
    status: w.status,
    endReason: w.endReason,
    lastMessage: w.lastMessage,
    output: out.messages,
    next: finished
      ? `The child is ${w.status}. Its output is above and still on pipe fd ${fds.pipeFd} (ipc_read moves past it); write to it there, or close fds ${fds.pipeFd} and ${fds.lifecycleFd} with ipc_close when you are done.`
      : `The child is still ${w.status} after ${Math.round(Math.min(opts.waitMs ?? cap, cap) / 1000)} s: call ipc_wait with fd ${fds.lifecycleFd} to wait again (each call is bounded; repeat until timedOut is false), then ipc_read fd ${fds.pipeFd} for its output.`,
  };
}
