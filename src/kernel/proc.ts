import { keysetPage } from '../store/paging.ts';
import type { WriteTx } from '../store/writer.ts';
import { invalid, WarrenError } from '../vocab/errors.ts';
import { type Principal, principalId } from '../vocab/principal.ts';
import { readableSession } from './access.ts';
import type { KernelContext } from './context.ts';
import {
  controllable,
  fdAndStream,
  liveSessionRow,
  openStreamByRef,
  stoppedError,
  subtree,
} from './lookup.ts';
import { inputArrived } from './reanimate.ts';
import { type SessionInfo, sessionDetail, sessionInfo } from './records.ts';
import { logSignal } from './signals.ts';
import { type SpawnResult, spawnInTx } from './spawn.ts';
import { setStatus } from './status.ts';
import { postMessage } from './streams.ts';
import { type StopOutcome, termOrKill } from './term.ts';
import type { SpawnRequest } from './types.ts';

/** Process control: spawn, inspect, signal, feed, suspend and resume sessions. */

export interface SpawnOptions {
  /**
   * Runs in the spawn's own transaction once the session is there (new, or found by its
   * idempotency key): a caller's own rows change atomically with the spawn (a plugin's task
   * gets its session, or neither happens). Throwing rolls the spawn back.
   */
  also?: (tx: WriteTx, r: SpawnResult) => Promise<void>;
  /**
   * The writer the spawn's unit runs in, by default the kernel's: `Kernel.spawnWith` runs it
   * in a plugin's own (its `tables.write`), whose unit it hands the plugin.
   */
  writer?: (fn: (tx: WriteTx) => Promise<SpawnResult>) => Promise<SpawnResult>;
}

export async function spawn(k: KernelContext, p: Principal, req: SpawnRequest, opts: SpawnOptions = {}) {
  const write = opts.writer ?? ((fn) => k.store.writer.write(fn));
  const r = await write(async (tx) => {
    const r = await spawnInTx(tx, k, p, req);
    await opts.also?.(tx, r);
    return r;
  });
  // The answer shows the session as its agent came up (or failed to): the row the start read
  // last when it started one, else read here (as for one found by its idempotency key).
  const up = await k.supervisor.start(r.session.id, 'start');
  return {
    session: r.created && up ? sessionDetail(up, k.clock.now()) : await session(k, p, r.session.id),
    lifecycleFd: r.lifecycleFd,
    pipeFd: r.pipeFd,
    created: r.created,
  };
}

export async function session(k: KernelContext, p: Principal, id: string): Promise<SessionInfo> {
  return sessionDetail(await readableSession(k.store.reader, p, id), k.clock.now());
}

/**
 * One page of sessions in creation order (ids are the kernel's monotonic ULIDs), after the
 * id `after` (or the first above it, if it is gone): the page is the query's (it walks
 * `sessions_zone_id` and stops), so a page costs the page, not every live session (10,000
 * live: 221–315 ms when all were read).
 */
export async function ps(
  k: KernelContext,
  p: Principal,
  opts: { all?: boolean; after?: string; limit: number },
): Promise<{ sessions: SessionInfo[]; next: string | null }> {
  let q = k.store.reader.selectFrom('sessions').selectAll().where('zone', '=', p.zone);
  if (!opts.all) q = q.where('status', '!=', 'stopped');
  if (p.kind === 'session') q = q.where('parent_id', '=', p.sessionId);
  if (opts.after !== undefined) q = q.where('id', '>', opts.after);
  const { items, next } = await keysetPage(opts.limit, (n) => q.orderBy('id', 'asc').limit(n).execute());
  const now = k.clock.now();
  return { sessions: items.map((r) => sessionInfo(r, now)), next };
}

/** SIGKILL, or with `graceful` SIGTERM (escalated to SIGKILL after the grace period). */
export async function kill(
  k: KernelContext,
  p: Principal,
  id: string,
  opts: { graceful?: boolean } = {},
): Promise<StopOutcome & { id: string }> {
  return k.store.writer.write(async (tx) => {
    const row = await controllable(tx.db, p, id);
    // Like kill(2) on a reaped pid: an error, and nothing written.
    if (row.status === 'stopped') {
      throw new WarrenError('session_stopped', `session ${id} has already stopped (${row.end_reason})`, {
        id,
      });
    }
    return { id, ...(await termOrKill(tx, k, row, principalId(p), opts.graceful ?? false)) };
  });
}

/** ipc_terminate: SIGTERM the child behind an fd; the fd stays open. */
export async function terminate(k: KernelContext, p: Principal, fd: number) {
  return k.store.writer.write(async (tx) => {
    const { stream } = await fdAndStream(tx, p, fd, { reservedOk: true });
    if (!stream.session_id || (stream.kind !== 'lifecycle' && stream.kind !== 'pipe')) {
      throw invalid(`fd ${fd} is not a pipe or lifecycle fd of a child`);
    }
    const child = await liveSessionRow(tx, stream.session_id);
    return { session: child.id, ...(await termOrKill(tx, k, child, principalId(p), true)) };
  });
}

/** Inject input: a message on the session's stdin. */
export async function send(k: KernelContext, p: Principal, id: string, text: string) {
  const ref = await k.store.writer.write((tx) => sendIn(tx, k, p, id, text));
  return { seq: ref.seq };
}

/**
 * `send` inside the caller's transaction, so a plugin's state change and the input it
 * causes commit together (or neither does). The ref's `seq` is set once the batch commits.
 */
export async function sendIn(tx: WriteTx, k: KernelContext, p: Principal, id: string, text: string) {
  const row = await controllable(tx.db, p, id);
  // Its stdin closed with it: say that, not "stream stdin:… does not exist".
  if (row.status === 'stopped') throw stoppedError(row);
  const stdin = await openStreamByRef(tx, row.zone, `stdin:${id}`);
  const ref = postMessage(tx, stdin, principalId(p), { text }, id);
  await inputArrived(tx, k, row, p);
  return ref;
}

/** SIGSTOP / SIGCONT down the whole subtree. */
export async function stopOrContinue(
  k: KernelContext,
  p: Principal,
  id: string,
  signal: 'SIGSTOP' | 'SIGCONT',
) {
  const actor = principalId(p);
  const out = await k.store.writer.write(async (tx) => {
    await controllable(tx.db, p, id);
    const affected: string[] = [];
    for (const row of await subtree(tx.db, id)) {
      if (row.status === 'stopped') continue;
      if (signal === 'SIGSTOP' && row.status !== 'suspended') {
        logSignal(tx, row.zone, 'SIGSTOP', row.id, actor);
        await setStatus(tx, k, row, 'suspended', { reason: 'SIGSTOP', actor });
        tx.afterCommit(() => k.effects.stopAgent(row.id));
        affected.push(row.id);
      } else if (signal === 'SIGCONT' && row.status === 'suspended' && row.suspend_reason === 'SIGSTOP') {
        logSignal(tx, row.zone, 'SIGCONT', row.id, actor);
        tx.afterCommit(() => k.effects.startAgent(row.id, 'resume'));
        affected.push(row.id);
      }
    }
    return { signal, sessions: affected };
  });
  // The starts were handed off at commit; the caller's answer (`warren resume`) must show the
  // sessions as they are after them, not still suspended. Commit hooks run before the write
  // resolves, so each start is under way here; waiting on it never starts another.
  if (signal === 'SIGCONT') await Promise.all(out.sessions.map((s) => k.supervisor.started(s)));
  return out;
}

/** Reanimate a suspended session from where it stood. */
export async function resume(k: KernelContext, p: Principal, id: string): Promise<SessionInfo> {
  await k.store.writer.write(async (tx) => {
    const row = await controllable(tx.db, p, id);
    if (row.status === 'pending' || row.status === 'running' || row.status === 'idle') {
      if (k.supervisor.has(id)) return;
    }
    tx.append({
      zone: row.zone,
      type: 'session.resume_requested',
      actor: principalId(p),
      session_id: id,
      payload: {},
    });
  });
  await k.supervisor.start(id, 'resume');
  return session(k, p, id);
}

/** A spawn made in a caller's write unit (Kernel.spawnIn). */
export interface SpawnedIn {
  /** The session: new, or the one the request's idempotency key already names. */
  id: string;
  created: boolean;
  /**
   * Settles once the unit has committed and the agent has come up (or failed to); it never
   * settles when the unit does not commit.
   */
  started: Promise<void>;
}

/**
 * The one spawn path inside a caller's unit: the same checks and the same transaction work
 * as `spawn`, so the caller's own rows and the session commit together (or neither does);
 * the agent starts once the unit has committed.
 */
export async function spawnIn(
  tx: WriteTx,
  k: KernelContext,
  p: Principal,
  req: SpawnRequest,
): Promise<SpawnedIn> {
  const r = await spawnInTx(tx, k, p, req);
  const started = new Promise<void>((resolve, reject) => {
    tx.afterCommit(() => {
      k.supervisor.start(r.session.id, 'start').then(() => resolve(), reject);
    });
  });
  // A caller that does not wait for the start leaves no unhandled rejection behind.
  started.catch(() => {});
  return { id: r.session.id, created: r.created, started };
}
