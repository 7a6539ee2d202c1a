import { dropExpired, RETENTION_BATCH, RETENTION_UNITS_PER_TICK } from '../store/retention.ts';
import type { TimerHandle } from '../util/clock.ts';
import { KERNEL_ACTOR } from '../vocab/principal.ts';
import { wallPhase } from './breach.ts';
import type { Core } from './core.ts';
import { DriftWatch } from './drift.ts';
import { endSession, isHeld } from './lifecycle.ts';
import { sessionById } from './lookup.ts';
import type { TickReport } from './observer.ts';
import { ownedHere } from './ownership.ts';
import { retireRows } from './retire.ts';
import { setStatus } from './status.ts';

export interface ReconcileHooks {
  escalate(sessionId: string): Promise<void>;
  isRunningHere(sessionId: string): boolean;
  /** Its agent is being started here (its status already says running). */
  isStarting?(sessionId: string): boolean;
}

/**
 * Where a phase runs when several nodes share the database: `cluster` on one node at a time
 * (a PostgreSQL try-lock; the others skip it that tick), `node` on each (what only that node
 * can do: its own agents, its in-memory cursors). Alone, every phase runs.
 */
export type PhaseScope = 'cluster' | 'node';

export interface Phase {
  name: string;
  run(): Promise<void>;
  scope: PhaseScope;
  /** Seed 001's name for what this phase does, where warren's differs (ReconcilePhase.seed). */
  seed?: string;
}

const BATCH = 500;

/**
 * The backstop. Handlers react in the moment; this loop repairs whatever drifted. Phases
 * run in order with errors isolated, a tick never overlaps the previous one, and each
 * phase selects only rows that need work (indexed), so a tick costs what changed.
 */
export class Reconciler {
  private timer: TimerHandle | undefined;
  private running: Promise<void> | undefined;
  private stopped = true;
  private unfollow: (() => void) | undefined;
  private readonly drift = new DriftWatch();
  /** Set at the start of each tick: whether the per-session phases look at every live session. */
  private full = true;
  readonly phases: Phase[];
  /** The last finished tick (`warren status`). */
  lastTick: TickReport | undefined;
  /** Ticks started so far: the next one's number is this plus one. */
  private ticks = 0;

  constructor(
    private readonly core: Core,
    private readonly hooks: ReconcileHooks,
  ) {
    this.phases = [
      { name: 'term-deadlines', run: () => this.termDeadlines(), scope: 'cluster' },
      { name: 'ttl', run: () => this.ttl(), scope: 'cluster' },
      { name: 'budget-wall', run: () => wallPhase(this.core, BATCH), scope: 'cluster' },
      // Seed 001's environment-reconciliation: agents whose process or connection is gone.
      {
        name: 'lost-agents',
        run: () => this.lostAgents(),
        scope: 'node',
        seed: 'environment-reconciliation',
      },
      // Seed 001's lifecycle-cleanup: sessions no fd holds any more are reaped.
      { name: 'unheld', run: () => this.unheld(), scope: 'cluster', seed: 'lifecycle-cleanup' },
      { name: 'cursors', run: () => this.core.fdTable.flush(), scope: 'node' },
      { name: 'retention', run: () => this.retention(), scope: 'cluster' },
      {
        name: 'row-retention',
        run: () => retireRows(this.core, KERNEL_ACTOR).then(() => {}),
        scope: 'cluster',
      },
    ];
  }

  start(): void {
    this.stopped = false;
    this.unfollow ??= this.core.store.writer.onCommit((events) => this.drift.follow(events));
    this.schedule();
  }

  stop(): void {
    this.stopped = true;
    this.unfollow?.();
    this.unfollow = undefined;
    if (this.timer) this.core.clock.clearTimeout(this.timer);
    this.timer = undefined;
  }

  /** One tick; if one is in flight, wait for it instead of doubling up. */
  tick(): Promise<void> {
    if (this.running) return this.running;
    this.running = this.runPhases().finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = this.core.clock.setTimeout(() => {
      void this.tick().finally(() => this.schedule());
    }, this.core.config.reconcileIntervalMs);
  }

  private async runPhases(): Promise<void> {
    this.full = this.drift.fullSweep();
    const tick: TickReport = { n: ++this.ticks, at: this.core.clock.now(), ms: 0, errors: [] };
    const started = performance.now();
    for (const phase of this.phases) {
      const t0 = performance.now();
      let failure: unknown;
      try {
        if (phase.scope === 'cluster') await this.core.node.once(phase.name, () => phase.run());
        else await phase.run();
      } catch (error) {
        failure = error;
        const message = (error as Error)?.message ?? String(error);
        tick.errors.push({ phase: phase.name, message });
        this.core.log.error({ phase: phase.name, err: error }, `reconcile phase ${phase.name} failed`);
      }
      for (const o of this.core.observers) o.reconcilePhase?.(phase.name, performance.now() - t0, failure);
    }
    tick.ms = performance.now() - started;
    this.lastTick = tick;
  }

  /** SIGTERM grace periods that ran out while no timer was armed (a restart). */
  private async termDeadlines(): Promise<void> {
    const due = await this.core.store.reader
      .selectFrom('sessions')
      .select('id')
      .where('status', '!=', 'stopped')
      .where('term_deadline', '<=', this.core.clock.now())
      .limit(BATCH)
      .execute();
    for (const r of due) await this.hooks.escalate(r.id);
  }

  private async ttl(): Promise<void> {
    const due = await this.core.store.reader
      .selectFrom('sessions')
      .select('id')
      .where('status', '!=', 'stopped')
      .where('expires_at', '<=', this.core.clock.now())
      .limit(BATCH)
      .execute();
    for (const r of due) {
      await this.core.store.writer.write((tx) => endSession(tx, this.core, r.id, 'expired', KERNEL_ACTOR));
    }
  }

  /** Live sessions whose agent is not running here: their transport is gone. */
  private async lostAgents(): Promise<void> {
    // In a cluster the node's own sessions without a process are started again instead, by
    // the cluster's adopt phase (src/cluster/own-sessions.ts): after a fence or an outage that
    // is every one of them, and suspending them here would leave them waiting for good.
    if (this.core.node.clustered) return;
    const here = (id: string) => this.hooks.isRunningHere(id) || this.hooks.isStarting?.(id) === true;
    let ids: string[];
    if (this.full) {
      this.drift.agents.clear();
      // Only this node's: another node's agents run there (docs/scaling.md).
      const live = await this.core.store.reader
        .selectFrom('sessions')
        .select('id')
        .where('status', 'in', ['running', 'idle'])
        .where('depth', '>', 0)
        .where((eb) => eb.or([eb('owner_node', '=', this.core.node.id), eb('owner_node', 'is', null)]))
        .execute();
      ids = live.map((r) => r.id);
    } else ids = await this.stillLive(DriftWatch.take(this.drift.agents).filter((id) => !here(id)));
    const lost = ids.filter((id) => !here(id));
    if (lost.length === 0) return;
    await this.core.store.writer.write(async (tx) => {
      for (const id of lost) {
        if (here(id)) continue;
        const row = await sessionById(tx.db, id);
        if (row && ownedHere(this.core.node, row) && (row.status === 'running' || row.status === 'idle')) {
          await setStatus(tx, this.core, row, 'suspended', { reason: 'transport lost' });
        }
      }
    });
  }

  /** Of these sessions, those still running or idle (read outside the writer: most have moved on). */
  private async stillLive(ids: string[]): Promise<string[]> {
    const out: string[] = [];
    for (let i = 0; i < ids.length; i += BATCH) {
      const rows = await this.core.store.reader
        .selectFrom('sessions')
        .select('id')
        .where('id', 'in', ids.slice(i, i + BATCH))
        .where('status', 'in', ['running', 'idle'])
        .execute();
      for (const r of rows) out.push(r.id);
    }
    return out;
  }

  /** Sessions nobody holds that the event path missed: all of them, or those whose streams lost an fd. */
  private async unheld(): Promise<void> {
    const streams = DriftWatch.take(this.drift.holders);
    if (!this.full && streams.length === 0) return;
    let q = this.core.store.reader
      .selectFrom('sessions')
      .select('id')
      .where('status', '!=', 'stopped')
      .where('depth', '>', 0);
    if (!this.full) {
      q = q.where('id', 'in', (eb) =>
        eb
          .selectFrom('streams')
          .select('session_id')
          .where('id', 'in', streams.slice(0, 1_000))
          .where('kind', 'in', ['lifecycle', 'pipe']),
      );
      // What did not fit waits for the next tick.
      for (const id of streams.slice(1_000)) this.drift.holders.add(id);
    }
    const candidates = await q
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('fds')
              .innerJoin('streams', 'streams.id', 'fds.stream_id')
              .select('fds.id')
              .whereRef('streams.session_id', '=', 'sessions.id')
              .where('streams.kind', 'in', ['lifecycle', 'pipe'])
              .where('fds.closed_at', 'is', null)
              .whereRef('fds.holder', '!=', 'sessions.id'),
          ),
        ),
      )
      .limit(BATCH)
      .execute();
    for (const { id } of candidates) {
      await this.core.store.writer.write(async (tx) => {
        if (!(await isHeld(tx, id)))
          await endSession(tx, this.core, id, 'reaped', KERNEL_ACTOR, { by: 'reconcile' });
      });
    }
  }

  /** Drop events past the retention window, except messages some open fd has not been given. */
  private async retention(): Promise<void> {
    const days = this.core.config.retentionDays;
    if (days === null) return;
    const cutoff = this.core.clock.now() - days * 86_400_000;
    // Small units, so the writer (and on SQLite the event loop) is never held for long;
    // a bounded number per tick, so a large backlog drains over several ticks.
    for (let unit = 0; unit < RETENTION_UNITS_PER_TICK; unit++) {
      const deleted = await this.core.store.writer.write(async (tx) => {
        const r = await dropExpired(tx, cutoff, RETENTION_BATCH);
        if (r.deleted > 0) {
          tx.append({
            zone: 'default',
            type: 'log.retention',
            actor: KERNEL_ACTOR,
            payload: { deleted: r.deleted, before: cutoff, upToSeq: r.upToSeq },
          });
        }
        return r.deleted;
      });
      if (deleted < RETENTION_BATCH) return;
    }
  }
}
