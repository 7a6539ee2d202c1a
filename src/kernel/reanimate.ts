import type { DeliveryMode, EndReason, SessionsTable } from '../store/schema.ts';
import type { WriteTx } from '../store/writer.ts';
import { parseJson } from '../util/json.ts';
import { WarrenError } from '../vocab/errors.ts';
import { type Principal, principalId } from '../vocab/principal.ts';
import type { KernelContext } from './context.ts';
import type { Core } from './core.ts';
import { controllable, openFdsOfOn, sessionRow } from './lookup.ts';
import { type SessionInfo, sessionInfo } from './records.ts';
import { createStream, openFd } from './streams.ts';

/**
 * "Open is reanimate" (seed 001): a session whose transport dropped is suspended, not ended;
 * subscribing to its lifecycle again brings it back from where it stood — same cwd, MCP
 * endpoint, model and resume id. A session that stopped cleanly (completed, terminated,
 * reaped) comes back too when its runtime saved resume state; one that crashed, was killed
 * or ran out of time or budget does not (its end was a verdict, not a drop).
 */
const REVIVABLE_ENDS: ReadonlySet<EndReason> = new Set(['completed', 'terminated', 'reaped']);

export function canReanimate(row: SessionsTable): boolean {
  if (row.status === 'suspended') return row.suspend_reason !== 'SIGSTOP';
  if (row.status !== 'stopped' || row.end_reason === null) return false;
  return row.runtime_state !== null && REVIVABLE_ENDS.has(row.end_reason);
}

/**
 * Input reached a session: queued either way; if it is suspended and its policy lets this
 * writer wake it, it is reanimated.
 */
export async function inputArrived(
  tx: WriteTx,
  core: Core,
  row: SessionsTable,
  writer: Principal,
): Promise<void> {
  if (row.status === 'suspended' && wakesOnInput(row, writer)) {
    await reanimate(tx, core, row, principalId(writer), 'input');
  }
}

/** Who may wake a suspended session by writing to it: the spawn's `wakeOnInput` (default: operators). */
function wakesOnInput(row: SessionsTable, writer: Principal): boolean {
  const policy = parseJson<{ wakeOnInput?: string }>(row.spec, {}).wakeOnInput ?? 'operator';
  if (policy === 'never') return false;
  return policy === 'any' || writer.kind === 'operator';
}

/** Bring a session back if it can come back; true when it will. */
export async function reanimate(
  tx: WriteTx,
  core: Core,
  row: SessionsTable,
  actor: string,
  why: string,
): Promise<boolean> {
  if (!canReanimate(row)) return false;
  if (row.status === 'stopped') {
    await replumb(tx, core, row, actor);
    await tx.db
      .updateTable('sessions')
      .set({
        status: 'suspended',
        suspend_reason: 'reanimating',
        end_reason: null,
        end_detail: null,
        ended_at: null,
        updated_at: tx.now,
      })
      .where('id', '=', row.id)
      .execute();
    tx.append({
      zone: row.zone,
      type: 'session.status',
      actor,
      session_id: row.id,
      payload: { from: 'stopped', to: 'suspended', reason: 'reanimating' },
    });
  }
  tx.append({ zone: row.zone, type: 'session.reanimated', actor, session_id: row.id, payload: { why } });
  tx.afterCommit(() => core.effects.startAgent(row.id, 'resume'));
  return true;
}

/** A stopped session's own ends (0 stdin, 1 pipe, 2 lifecycle) on open streams again. */
async function replumb(tx: WriteTx, core: Core, row: SessionsTable, opener: string): Promise<void> {
  const id = row.id;
  // Its old ends are closed rows holding the numbers 0-2; the log keeps their history.
  await tx.db.deleteFrom('fds').where('holder', '=', id).where('num', 'in', [0, 1, 2]).execute();
  const ends = [
    { kind: 'stdin', num: 0, perm: 'r', mode: 'async' },
    { kind: 'pipe', num: 1, perm: 'rw', mode: 'async' },
    { kind: 'lifecycle', num: 2, perm: 'rw', mode: 'detach' },
  ] as const;
  for (const end of ends) {
    const name = `${end.kind}:${id}`;
    const stream =
      (await tx.db
        .selectFrom('streams')
        .selectAll()
        .where('zone', '=', row.zone)
        .where('name', '=', name)
        .where('closed_at', 'is', null)
        .executeTakeFirst()) ??
      (await createStream(tx, core.ids, {
        zone: row.zone,
        name,
        kind: end.kind,
        owner: opener,
        sessionId: id,
        actor: opener,
      }));
    await openFd(tx, core.ids, {
      zone: row.zone,
      holder: id,
      stream,
      perm: end.perm,
      mode: end.mode,
      num: end.num,
      spawned: true,
      actor: opener,
    });
  }
}

export interface OpenResult {
  session: SessionInfo;
  lifecycleFd: number;
  pipeFd: number | null;
  reanimated: boolean;
}

/**
 * Subscribe to a session's lifecycle (and, when asked, its pipe): the caller gets fds on them,
 * and a suspended or cleanly stopped session is reanimated. Idempotent for fds already held.
 */
export async function openSession(
  k: KernelContext,
  p: Principal,
  id: string,
  pipe: DeliveryMode | null,
): Promise<OpenResult> {
  const actor = principalId(p);
  const out = await k.store.writer.write(async (tx) => {
    const row = await controllable(tx.db, p, id);
    if (p.kind === 'session' && p.sessionId === id)
      throw new WarrenError('invalid_input', 'a session cannot open itself');
    const reanimated = await reanimate(tx, k, row, actor, 'lifecycle opened');
    if (row.status === 'stopped' && !reanimated) {
      throw new WarrenError(
        'session_stopped',
        `session ${id} has stopped (${row.end_reason}) and cannot be reanimated${row.runtime_state === null ? ': its runtime saved no resume state' : ''}`,
        { id },
      );
    }
    const fdOn = async (kind: 'lifecycle' | 'pipe', mode: DeliveryMode) => {
      const stream = await tx.db
        .selectFrom('streams')
        .selectAll()
        .where('zone', '=', row.zone)
        .where('name', '=', `${kind}:${id}`)
        .where('closed_at', 'is', null)
        .executeTakeFirstOrThrow();
      const [held] = await openFdsOfOn(tx, actor, stream.id);
      if (held) return held.num;
      return (await openFd(tx, k.ids, { zone: row.zone, holder: actor, stream, perm: 'rw', mode, actor }))
        .num;
    };
    return {
      lifecycleFd: await fdOn('lifecycle', 'detach'),
      pipeFd: pipe ? await fdOn('pipe', pipe) : null,
      reanimated,
    };
  });
  if (out.reanimated) await k.supervisor.start(id, 'resume');
  return { session: sessionInfo(await sessionRow({ db: k.store.reader }, id), k.clock.now()), ...out };
}
