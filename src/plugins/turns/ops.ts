import type { Kysely } from 'kysely';
import type { Kernel } from '../../kernel/kernel.ts';
import { notFound, WarrenError } from '../../vocab/errors.ts';
import { type Principal, principalId } from '../../vocab/principal.ts';
import type { Policy } from './config.ts';
import { requireSafeId } from './policy.ts';
import { capText } from './records.ts';
import type { BridgeSessionsTable, TurnStatus, TurnsDb, TurnsTable, TurnsTables, TurnsTx } from './schema.ts';
import { sendKeys } from './tmux.ts';

/** The bridge's writes: each one transaction, its log event committed with it. */

export interface Namespace {
  profile: string;
  repo: string;
}

/** A session of this namespace, or not_found (another namespace's session is not revealed). */
export async function bridgeSession(
  db: Kysely<TurnsDb>,
  zone: string,
  ns: Namespace,
  sessionId: string,
): Promise<BridgeSessionsTable> {
  requireSafeId('session_id', sessionId);
  const row = await db
    .selectFrom('turns_sessions')
    .selectAll()
    .where('session_id', '=', sessionId)
    .executeTakeFirst();
  if (!row || row.zone !== zone || row.profile !== ns.profile || row.repo !== ns.repo) {
    throw notFound('coordinator session', sessionId);
  }
  return row;
}

/** A turn that belongs to `session` (when given) in this namespace. */
export async function turnOf(
  db: Kysely<TurnsDb>,
  zone: string,
  ns: Namespace,
  turnId: string,
  sessionId?: string,
): Promise<TurnsTable> {
  requireSafeId('turn_id', turnId);
  const t = await db.selectFrom('turns').selectAll().where('id', '=', turnId).executeTakeFirst();
  if (!t || t.zone !== zone || (sessionId !== undefined && t.session_id !== sessionId))
    throw notFound('turn', turnId);
  await bridgeSession(db, zone, ns, t.session_id);
  return t;
}

export const activeTurn = (db: Kysely<TurnsDb>, sessionId: string) =>
  db
    .selectFrom('turns')
    .selectAll()
    .where('session_id', '=', sessionId)
    .where('status', '=', 'active')
    .executeTakeFirst();

/** Hand text to a session: a warren session's stdin (in this transaction), a tmux pane's keys (after commit). */
export async function deliver(
  tx: TurnsTx,
  kernel: Kernel,
  by: Principal,
  s: BridgeSessionsTable,
  text: string,
): Promise<void> {
  if (s.mode === 'tmux') {
    const target = s.tmux_target;
    if (!target) throw new WarrenError('conflict', `session ${s.session_id} has no tmux target`);
    tx.afterCommit(() => void sendKeys(target, text).catch(() => {}));
    return;
  }
  await kernel.sendIn(tx, by, s.session_id, text);
}

export interface SendInput {
  session_id: string;
  prompt: string;
  queue?: boolean | undefined;
  force?: boolean | undefined;
  workflow?: string | undefined;
}

/** One active turn per session: a second is refused, queued, or supersedes the active one. */
export async function sendPrompt(
  kernel: Kernel,
  tables: TurnsTables,
  p: Principal,
  ns: Namespace,
  i: SendInput,
): Promise<{ turn: TurnsTable; superseded: string | null; activeTurnId: string | null }> {
  return tables.write(async (tx) => {
    const s = await bridgeSession(tx.db, p.zone, ns, i.session_id);
    const active = await activeTurn(tx.db, s.session_id);
    if (active && !i.queue && !i.force) {
      throw new WarrenError(
        'active_turn_exists',
        `session ${s.session_id} has an active turn (${active.id}): pass queue: true to queue this prompt or force: true to supersede it`,
        { active_turn_id: active.id },
      );
    }
    const id = kernel.ids.id('turn');
    const now = tx.now;
    const startNow = !active || i.force === true;
    const row: TurnsTable = {
      id,
      zone: p.zone,
      session_id: s.session_id,
      status: startNow ? 'active' : 'queued',
      prompt: i.prompt,
      workflow: i.workflow ?? null,
      final_text: null,
      final_format: null,
      final_source: null,
      final_artifact: null,
      final_truncated: 0,
      evidence: '[]',
      error: null,
      blocker: null,
      superseded_by: null,
      created_by: principalId(p),
      created_at: now,
      started_at: startNow ? now : null,
      ended_at: null,
    };
    let superseded: string | null = null;
    if (active && i.force) {
      superseded = active.id;
      await tx.db
        .updateTable('turns')
        .set({ status: 'superseded', superseded_by: id, ended_at: now })
        .where('id', '=', active.id)
        .execute();
      tx.append(turnEvent(p, active, 'superseded', { superseded_by: id }));
    }
    await tx.db.insertInto('turns').values(row).execute();
    tx.append(
      turnEvent(p, row, row.status, { prompt_bytes: Buffer.byteLength(i.prompt), workflow: row.workflow }),
    );
    if (startNow) await deliver(tx, kernel, p, s, i.prompt);
    // The session's active turn after this prompt: this one, or the one it queued behind.
    return { turn: row, superseded, activeTurnId: startNow ? id : (active?.id ?? null) };
  });
}

/** A turn's log event: a bounded summary pointing at the turn, never the prompt or response itself. */
export function turnEvent(
  p: Principal | string,
  t: { id: string; zone: string; session_id: string },
  status: TurnStatus,
  extra: Record<string, unknown> = {},
) {
  return {
    zone: t.zone,
    type: `turn.${status}`,
    actor: typeof p === 'string' ? p : principalId(p),
    session_id: t.session_id,
    payload: { turn_id: t.id, status, ref: `turn:${t.id}`, ...extra },
  };
}

export interface Ending {
  status: Extract<TurnStatus, 'completed' | 'failed' | 'cancelled'>;
  text: string | null;
  source: 'runtime_end_of_turn' | 'report_status';
  error?: string | null;
  blocker?: string | null;
  evidence?: readonly string[];
}

/**
 * End an active (or queued) turn and promote the session's next queued one, in one
 * transaction. A turn that is already over stays as it is (the first ending stands).
 * Returns the promoted turn, if any.
 */
export async function endTurn(
  kernel: Kernel,
  tables: TurnsTables,
  policy: Policy,
  actor: string,
  turnId: string,
  e: Ending,
): Promise<{ ended: boolean; promoted: TurnsTable | null }> {
  return tables.write(async (tx) => {
    const t = await tx.db.selectFrom('turns').selectAll().where('id', '=', turnId).executeTakeFirst();
    if (!t || (t.status !== 'active' && t.status !== 'queued')) return { ended: false, promoted: null };
    const cut = e.text === null ? null : capText(e.text, policy.responseByteCap);
    await tx.db
      .updateTable('turns')
      .set({
        status: e.status,
        final_text: cut?.text ?? null,
        final_format: 'text',
        final_source: e.source,
        final_truncated: cut?.truncated ? 1 : 0,
        error: e.error ?? null,
        blocker: e.blocker ?? null,
        evidence: JSON.stringify(e.evidence ?? []),
        ended_at: tx.now,
      })
      .where('id', '=', t.id)
      .execute();
    tx.append(
      turnEvent(actor, t, e.status, {
        source: e.source,
        response_bytes: e.text === null ? 0 : Buffer.byteLength(e.text),
      }),
    );
    if (t.status !== 'active') return { ended: true, promoted: null };
    const promoted = await promoteNext(tx, kernel, actor, t.zone, t.session_id);
    return { ended: true, promoted };
  });
}

/** The oldest queued turn of a session becomes active and its prompt is delivered. */
async function promoteNext(
  tx: TurnsTx,
  kernel: Kernel,
  actor: string,
  zone: string,
  sessionId: string,
): Promise<TurnsTable | null> {
  const next = await tx.db
    .selectFrom('turns')
    .selectAll()
    .where('session_id', '=', sessionId)
    .where('status', '=', 'queued')
    .orderBy('id')
    .limit(1)
    .executeTakeFirst();
  if (!next) return null;
  const s = await tx.db
    .selectFrom('turns_sessions')
    .selectAll()
    .where('session_id', '=', sessionId)
    .executeTakeFirstOrThrow();
  await tx.db
    .updateTable('turns')
    .set({ status: 'active', started_at: tx.now })
    .where('id', '=', next.id)
    .execute();
  tx.append(turnEvent(actor, next, 'active', { promoted: true }));
  const by: Principal = { kind: 'operator', name: 'turns', zone };
  try {
    await deliver(tx, kernel, by, s, next.prompt);
  } catch (error) {
    // The session is gone: the promoted turn cannot run; it fails rather than waiting forever.
    await tx.db
      .updateTable('turns')
      .set({ status: 'failed', error: (error as Error).message, ended_at: tx.now })
      .where('id', '=', next.id)
      .execute();
    tx.append(turnEvent(actor, next, 'failed', { error: 'delivery failed' }));
    return null;
  }
  return { ...next, status: 'active', started_at: tx.now };
}
