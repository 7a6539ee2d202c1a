import type { PluginTables, ReconcilePhase } from '../../contract/plugin.ts';
import type { Kernel } from '../../kernel/kernel.ts';
import type { LogEvent } from '../../store/events.ts';
import type { TimerHandle } from '../../util/clock.ts';
import type { Log } from '../../util/log.ts';
import type { Principal } from '../../vocab/principal.ts';
import { type Call, runAction, type ScheduleAction, targetDone } from './action.ts';
import { fireDue, isActive } from './firing.ts';
import type { FireStatus, ScheduleFiresTable, SchedulingDb } from './schema.ts';

/** Running fires `follow` looks at per round. */
const FOLLOW_PAGE = 500;

/** How long to sleep for a due time `ms` away: already past (another server's row), 10 ms. */
const dueIn = (ms: number): number => (ms > 0 ? ms : 10);

export interface SchedulerOptions {
  /** A due time older than this when fired counts as missed (missed-fire policy). */
  graceMs: number;
  /** Schedules per firing transaction. */
  batch: number;
  /** The timer never sleeps longer than this (schedules other servers added, clock steps). */
  maxSleepMs: number;
  /** PostgreSQL: a pending fire another server claimed longer ago than this is taken over. */
  leaseMs: number;
  /**
   * Actions run at once. Bounded so that a burst of fires queues its actions here rather
   * than ahead of the next firing transaction in the writer: fires stay on time.
   */
  concurrency: number;
}

export const defaultSchedulerOptions: SchedulerOptions = {
  graceMs: 60_000,
  batch: 200,
  maxSleepMs: 30_000,
  leaseMs: 60_000,
  concurrency: 8,
};

/**
 * Fires schedules: a timer armed for the earliest due one (so a one-minute cron fires
 * within a second of its time), and a reconcile phase that fires whatever is due, follows
 * what fires started, and takes over fires a crashed server left pending. One pass at a time.
 */
export class Scheduler {
  private timer: TimerHandle | undefined;
  private passing: Promise<void> | undefined;
  private again = false;
  private following: Promise<void> | undefined;
  private followAgain = false;
  private stopped = false;
  /** Fires whose action this server is running now (or waiting for a slot). */
  private readonly inFlight = new Set<string>();
  /** Actions running now, and those waiting for a slot (at most `concurrency` at once). */
  private active = 0;
  private readonly slots: Array<() => void> = [];
  private readonly work = new Set<Promise<unknown>>();
  /**
   * Running fires (id → target), as the log's `schedule.outcome` events say: a status event
   * wakes `follow` only when it is one of their targets', so a write no fire follows costs a
   * lookup. Filled at start, kept by each `follow` (which reads them all) and by the commits.
   */
  private readonly runningFires = new Map<string, string | null>();
  /** How many running fires follow each target; `null`: a fire with none (any status event follows). */
  private readonly targets = new Map<string | null, number>();
  readonly phases: ReconcilePhase[];

  constructor(
    private readonly kernel: Kernel,
    private readonly tables: PluginTables<SchedulingDb>,
    private readonly call: Call,
    private readonly log: Log,
    private readonly o: SchedulerOptions,
  ) {
    this.phases = [
      {
        name: 'fire',
        run: async () => {
          await this.recover();
          await this.follow();
          await this.pass();
        },
      },
    ];
  }

  async start(): Promise<void> {
    const running = await this.tables.reader
      .selectFrom('scheduling_fires')
      .select(['id', 'target'])
      .where('status', '=', 'running')
      .execute();
    for (const f of running) this.know(f.id, f.target);
    await this.recover();
    await this.pass();
  }

  /** A schedule changed (created, resumed, edited): fire what is due and re-arm the timer. */
  poke(): void {
    if (!this.stopped) this.track(this.pass());
  }

  /** A status event of a running fire's task or session may end what it started: follow soon. */
  onCommit(events: readonly LogEvent[]): void {
    if (this.stopped) return;
    // This batch's fires first: one may start following a target whose status is in it too.
    this.learn(events);
    if (this.targets.size === 0) return;
    const any = this.targets.has(null);
    for (const e of events) {
      const target =
        e.type === 'task.status' ? e.payload.task : e.type === 'session.status' ? e.session_id : undefined;
      if (target === undefined) continue;
      if (any || (typeof target === 'string' && this.targets.has(target))) {
        this.track(this.follow());
        return;
      }
    }
  }

  /** Every node's commits: which fires run now (another node's fires end on this one's commits too). */
  onAnyCommit(events: readonly LogEvent[]): void {
    this.learn(events);
  }

  /** Fires that started or stopped running, from their `schedule.outcome` events. */
  private learn(events: readonly LogEvent[]): void {
    for (const e of events) {
      if (e.type !== 'schedule.outcome') continue;
      const fire = e.payload.fireId;
      if (typeof fire !== 'string') continue;
      if (e.payload.status === 'running') {
        const target = e.payload.target;
        this.know(fire, typeof target === 'string' ? target : null);
      } else this.forget(fire);
    }
  }

  private know(fire: string, target: string | null): void {
    if (this.runningFires.has(fire)) return;
    this.runningFires.set(fire, target);
    this.targets.set(target, (this.targets.get(target) ?? 0) + 1);
  }

  private forget(fire: string): void {
    if (!this.runningFires.has(fire)) return;
    const target = this.runningFires.get(fire) ?? null;
    this.runningFires.delete(fire);
    const n = (this.targets.get(target) ?? 1) - 1;
    if (n > 0) this.targets.set(target, n);
    else this.targets.delete(target);
  }

  /** Wait until no pass, action or outcome is under way (tests, shutdown). */
  async settled(): Promise<void> {
    while (this.work.size > 0 || this.passing || this.following) {
      await Promise.allSettled([...this.work, this.passing, this.following]);
    }
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer !== undefined) this.kernel.clock.clearTimeout(this.timer);
    this.timer = undefined;
    await Promise.allSettled([...this.work]);
  }

  /** Fire everything due, then arm the timer for the next; joins a pass under way. */
  pass(): Promise<void> {
    if (this.passing) {
      this.again = true;
      return this.passing;
    }
    this.passing = (async () => {
      try {
        do {
          this.again = false;
          let more = true;
          while (more && !this.stopped) {
            const r = await this.tables.write((tx) =>
              fireDue(tx, { ...this.o, node: this.kernel.runId, ids: this.kernel.ids }),
            );
            more = r.more;
            for (const f of r.fires) this.track(this.execute(f.id));
          }
        } while (this.again && !this.stopped);
      } finally {
        // Re-armed even when the pass failed: the next due time still gets its wake-up.
        await this.arm().catch((error) =>
          this.log.error({ err: (error as Error).message }, 'warren: scheduling timer'),
        );
        this.passing = undefined;
      }
    })();
    return this.passing;
  }

  private track(p: Promise<unknown>): void {
    const q = p.catch((error) =>
      this.log.error({ err: (error as Error).message }, 'warren: scheduling failed'),
    );
    this.work.add(q);
    void q.finally(() => this.work.delete(q));
  }

  /** Sleep until the earliest enabled schedule is due (at most maxSleepMs). */
  private async arm(): Promise<void> {
    if (this.stopped) return;
    const next = await this.tables.reader
      .selectFrom('scheduling_schedules')
      .select('next_fire_at')
      .where('enabled', '=', 1)
      .where('next_fire_at', 'is not', null)
      .orderBy('next_fire_at')
      .limit(1)
      .executeTakeFirst();
    if (this.timer !== undefined) this.kernel.clock.clearTimeout(this.timer);
    this.timer = undefined;
    if (this.stopped) return;
    const clock = this.kernel.clock;
    // Still due right after a pass: another server holds its row (PostgreSQL); look again
    // shortly rather than spin.
    const wait =
      next?.next_fire_at == null
        ? this.o.maxSleepMs
        : Math.min(this.o.maxSleepMs, dueIn(Number(next.next_fire_at) - clock.now()));
    this.timer = clock.setTimeout(() => {
      this.timer = undefined;
      this.poke();
    }, wait);
  }

  /** Run one pending fire's action and record its outcome. */
  private async execute(fireId: string): Promise<void> {
    if (this.inFlight.has(fireId) || this.stopped) return;
    this.inFlight.add(fireId);
    if (this.active >= this.o.concurrency) await new Promise<void>((r) => this.slots.push(r));
    this.active++;
    try {
      const ctx = await this.fireContext(fireId);
      if (ctx?.fire.status !== 'pending') return;
      let status: FireStatus;
      let target: string | null = null;
      let error: string | null = null;
      if (!ctx.schedule) {
        status = 'skipped';
        error = 'its schedule was deleted';
      } else {
        try {
          const r = await runAction(this.kernel, this.call, ctx.owner!, ctx.action!, fireId);
          status = r.status;
          target = r.target;
        } catch (e) {
          status = 'error';
          error = `${(e as { code?: string }).code ?? 'error'}: ${(e as Error).message}`.slice(0, 2000);
        }
      }
      await this.finish(ctx.fire, 'pending', status, target, error);
    } finally {
      this.inFlight.delete(fireId);
      this.active--;
      this.slots.shift()?.();
    }
  }

  /** Record a fire's outcome (if it is still `from`); a finished one lets the next queued fire go. */
  private async finish(
    fire: ScheduleFiresTable,
    from: FireStatus,
    status: FireStatus,
    target: string | null,
    error: string | null,
  ): Promise<void> {
    const done = status !== 'running';
    const next = await this.tables.write(async (tx) => {
      const db = tx.db;
      const r = await db
        .updateTable('scheduling_fires')
        .set({ status, target, error, finished_at: done ? tx.now : null })
        .where('id', '=', fire.id)
        .where('status', '=', from)
        .executeTakeFirst();
      if (Number(r.numUpdatedRows) === 0) return null;
      // Known here at once, even before the plugin's commit subscribers are in place (start).
      tx.afterCommit(() => (done ? this.forget(fire.id) : this.know(fire.id, target)));
      await db
        .updateTable('scheduling_schedules')
        .set({ last_outcome: status })
        .where('id', '=', fire.schedule_id)
        .where('last_fire_id', '=', fire.id)
        .execute();
      tx.append({
        zone: fire.zone,
        type: 'schedule.outcome',
        actor: 'kernel',
        payload: { scheduleId: fire.schedule_id, fireId: fire.id, status, target, error },
      });
      if (!done || (await isActive(tx, fire.schedule_id))) return null;
      // The oldest queued fire of the schedule goes next, claimed by this server.
      const queued = await db
        .selectFrom('scheduling_fires')
        .select('id')
        .where('schedule_id', '=', fire.schedule_id)
        .where('status', '=', 'queued')
        .orderBy('due_at')
        .limit(1)
        .executeTakeFirst();
      if (!queued) return null;
      await db
        .updateTable('scheduling_fires')
        .set({ status: 'pending', node: this.kernel.runId, claimed_at: tx.now })
        .where('id', '=', queued.id)
        .execute();
      return queued.id;
    });
    if (next) this.track(this.execute(next));
  }

  private async fireContext(fireId: string) {
    const db = this.tables.reader;
    const fire = await db
      .selectFrom('scheduling_fires')
      .selectAll()
      .where('id', '=', fireId)
      .executeTakeFirst();
    if (!fire) return null;
    const schedule = await db
      .selectFrom('scheduling_schedules')
      .selectAll()
      .where('id', '=', fire.schedule_id)
      .executeTakeFirst();
    return {
      fire,
      schedule,
      owner: schedule ? (JSON.parse(schedule.owner) as Principal) : undefined,
      action: schedule ? (JSON.parse(schedule.action) as ScheduleAction) : undefined,
    };
  }

  /**
   * Pending fires nobody runs: this server's that are not in flight, a crashed run's (on
   * SQLite every other run; this node's earlier runs; another node's once its lease ran out). Claimed by a
   * compare-and-set, so two servers never take over the same one.
   */
  async recover(): Promise<void> {
    const db = this.tables.reader;
    const now = this.kernel.clock.now();
    const rows = await db
      .selectFrom('scheduling_fires')
      .select(['id', 'node', 'claimed_at'])
      .where('status', '=', 'pending')
      .orderBy('due_at')
      .limit(500)
      .execute();
    const me = this.kernel.runId;
    // This node's earlier runs are over (a node is one server on its data dir: boot.ts).
    const myNode = `${this.kernel.config.nodeId}.`;
    for (const r of rows) {
      if (this.inFlight.has(r.id)) continue;
      const stale =
        r.node !== me &&
        (this.tables.kind === 'sqlite' ||
          r.node === null ||
          r.node.startsWith(myNode) ||
          r.claimed_at === null ||
          now - Number(r.claimed_at) > this.o.leaseMs);
      if (r.node !== me && !stale) continue;
      if (r.node !== me) {
        const claimed = await this.tables.write(async (tx) => {
          const u = await tx.db
            .updateTable('scheduling_fires')
            .set({ node: me, claimed_at: tx.now })
            .where('id', '=', r.id)
            .where('status', '=', 'pending')
            .where('node', r.node === null ? 'is' : '=', r.node)
            .executeTakeFirst();
          return Number(u.numUpdatedRows) === 1;
        });
        if (!claimed) continue;
      }
      this.track(this.execute(r.id));
    }
  }

  /** Running fires whose task or session is done: record their outcome. One at a time; joins. */
  follow(): Promise<void> {
    if (this.following) {
      this.followAgain = true;
      return this.following;
    }
    this.following = (async () => {
      try {
        do {
          this.followAgain = false;
          await this.followOnce();
        } while (this.followAgain && !this.stopped);
      } finally {
        this.following = undefined;
      }
    })();
    return this.following;
  }

  private async followOnce(): Promise<void> {
    const known = [...this.runningFires.keys()];
    const rows = await this.tables.reader
      .selectFrom('scheduling_fires')
      .selectAll()
      .where('status', '=', 'running')
      .orderBy('due_at')
      .limit(FOLLOW_PAGE)
      .execute();
    // The running fires as they are now: what was known before the read and is not running
    // any more is forgotten (what the commits taught meanwhile stays), what is running is known.
    if (rows.length < FOLLOW_PAGE) {
      const now = new Set(rows.map((r) => r.id));
      for (const id of known) if (!now.has(id)) this.forget(id);
    }
    for (const fire of rows) this.know(fire.id, fire.target);
    for (const fire of rows) {
      const ctx = await this.fireContext(fire.id);
      if (!ctx?.schedule || fire.target === null) {
        await this.finish(fire, 'running', 'ok', fire.target, null);
        continue;
      }
      const done = await targetDone(this.kernel, this.call, ctx.owner!, ctx.action!, fire.target);
      if (done)
        await this.finish(
          fire,
          'running',
          done.ok ? 'ok' : 'error',
          fire.target,
          done.ok ? null : done.detail,
        );
    }
  }
}
