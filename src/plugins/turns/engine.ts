import type { Kernel } from '../../kernel/kernel.ts';
import type { Log } from '../../util/log.ts';
import type { Principal } from '../../vocab/principal.ts';
import type { Policy } from './config.ts';
import { endTurn } from './ops.ts';
import type { TurnsTables } from './schema.ts';
import type { CommitWaits } from './wait.ts';

/**
 * Completion from durable state: each active turn of a warren session is watched with the
 * kernel's own wait (`waitChild`: the session is idle with its input taken, or stopped) —
 * the runtime's end of turn, never parsed terminal output. A turn of an adopted tmux pane
 * has no runtime to report: it ends by `report_status` only.
 */
export class TurnEngine {
  private readonly watching = new Map<string, AbortController>();
  private stopped = false;

  constructor(
    private readonly kernel: Kernel,
    private readonly tables: TurnsTables,
    private readonly commits: CommitWaits,
    private readonly policy: Policy,
    private readonly log: Log,
  ) {}

  /** Watch every active turn (after a restart, the ones that were running). */
  async start(): Promise<void> {
    const rows = await this.tables.reader
      .selectFrom('turns')
      .innerJoin('turns_sessions', 'turns_sessions.session_id', 'turns.session_id')
      .select(['turns.id', 'turns.zone', 'turns.session_id', 'turns_sessions.mode'])
      .where('turns.status', '=', 'active')
      .execute();
    for (const r of rows) if (r.mode === 'warren') this.watch(r.id, r.zone, r.session_id);
  }

  /** Follow an active turn until its session's turn ends (idempotent per turn). */
  watch(turnId: string, zone: string, sessionId: string): void {
    if (this.stopped || this.watching.has(turnId)) return;
    const ac = new AbortController();
    this.watching.set(turnId, ac);
    void this.follow(turnId, zone, sessionId, ac.signal)
      .catch(async (error) => {
        if (ac.signal.aborted) return;
        const message = (error as Error).message;
        this.log.warn({ turn: turnId, err: message }, 'turns: watching a turn failed');
        // Its session is gone (deleted): the turn can never end on its own, so it fails now.
        if ((error as { code?: string }).code === 'not_found') {
          await endTurn(this.kernel, this.tables, this.policy, 'turns', turnId, {
            status: 'failed',
            text: null,
            source: 'runtime_end_of_turn',
            error: message,
          }).catch(() => {});
        }
      })
      .finally(() => this.watching.delete(turnId));
  }

  /** Stop watching a turn that ended another way (report_status, superseded). */
  forget(turnId: string): void {
    this.watching.get(turnId)?.abort();
  }

  private async follow(turnId: string, zone: string, sessionId: string, signal: AbortSignal): Promise<void> {
    const as: Principal = { kind: 'operator', name: 'turns', zone };
    const s = await this.tables.reader
      .selectFrom('turns_sessions')
      .select('mode')
      .where('session_id', '=', sessionId)
      .executeTakeFirst();
    // A tmux pane has no runtime to say its turn is over: report_status ends it.
    if (s?.mode !== 'warren') return;
    for (;;) {
      if (signal.aborted) return;
      const r = await this.kernel.waitChild(as, { session: sessionId }, { signal });
      if (signal.aborted) return;
      // Still ours? A report or a supersession may have ended it meanwhile.
      const t = await this.tables.reader
        .selectFrom('turns')
        .select('status')
        .where('id', '=', turnId)
        .executeTakeFirst();
      if (t?.status !== 'active') return;
      if (r.timedOut) continue;
      // Idle with a question of this turn open: the agent waits for its answer, the turn goes on.
      if (r.status !== 'stopped' && (await this.openQuestion(turnId))) {
        await this.commits.next(
          (e) => e.type === 'question.answered' && e.session_id === sessionId,
          this.kernel.config.maxWaitMs,
          signal,
        );
        continue;
      }
      // Confirmed on a fresh read: a wait that woke on an older idle must not end a turn
      // whose input the agent has only just taken (its status is running again by now).
      const now = await this.kernel.session(as, sessionId);
      if (
        now.status !== 'stopped' &&
        (now.status !== 'idle' || (await this.kernel.hasPendingInput(sessionId)))
      ) {
        continue;
      }
      const failed = now.status === 'stopped' && now.endReason !== 'completed';
      const { promoted } = await endTurn(this.kernel, this.tables, this.policy, 'turns', turnId, {
        status: failed ? 'failed' : 'completed',
        text: now.lastMessage,
        source: 'runtime_end_of_turn',
        error: failed ? `session stopped: ${now.endReason ?? 'unknown'}` : null,
      });
      if (promoted) this.watch(promoted.id, promoted.zone, promoted.session_id);
      return;
    }
  }

  private async openQuestion(turnId: string): Promise<boolean> {
    const q = await this.tables.reader
      .selectFrom('turns_questions')
      .select('id')
      .where('turn_id', '=', turnId)
      .where('status', '=', 'open')
      .executeTakeFirst();
    return q !== undefined;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const ac of this.watching.values()) ac.abort();
    this.watching.clear();
  }
}
