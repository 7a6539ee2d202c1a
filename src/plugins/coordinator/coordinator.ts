import type { ReconcilePhase } from '../../contract/plugin.ts';
import type { Kernel } from '../../kernel/kernel.ts';
import type { Clock, TimerHandle } from '../../util/clock.ts';
import type { Log } from '../../util/log.ts';
import type { CoordinatorConfig } from './config.ts';
import { cleanDelegations } from './delegations.ts';
import { exclusive } from './exclusive.ts';
import { dispatchPending, enforceDeadlines } from './invocations.ts';
import { Publisher } from './publisher.ts';
import type { CoordinatorTables } from './schema.ts';
import { watchHealth } from './services.ts';
import { makeSink, type Sink } from './sinks.ts';
import { cleanRetention, sweepTtl } from './sweeps.ts';

/** A background worker: runs every `intervalMs`, on one server process at a time. */
interface Worker {
  name: string;
  intervalMs: number;
  run(): Promise<void>;
}

/**
 * The started plugin: its config, the outbox publisher and the workers. Each worker is a
 * reconcile phase too (the kernel's tick runs it), and has a timer of its own so its
 * interval is its own; a run already in progress is not started twice.
 */
export class Coordinator {
  readonly sinks: Sink[];
  readonly publisher: Publisher;
  private readonly workers: Worker[];
  private readonly timers = new Map<string, TimerHandle>();
  private readonly running = new Map<string, Promise<void>>();
  private readonly lastRun = new Map<string, number>();
  private stopped = false;

  constructor(
    readonly kernel: Kernel,
    /** Its own tables (the syscalls reach them through the instance). */
    readonly tables: CoordinatorTables,
    readonly config: CoordinatorConfig,
    private readonly log: Log,
    private readonly clock: Clock = kernel.clock,
    /** Jitter for retry backoff (injected: tests pin it). */
    readonly random: () => number = Math.random,
  ) {
    this.sinks = config.outbox.sinks.map((s) => makeSink(s));
    this.publisher = new Publisher(tables, clock, log, config.outbox, this.sinks);
    this.workers = [
      {
        name: 'outbox-publisher',
        intervalMs: config.outbox.intervalMs,
        run: async () => {
          // Drain what is ready now, a batch at a time, before sleeping again.
          for (let i = 0; i < 100 && !this.stopped; i++) {
            const p = await this.publisher.pass();
            if (p.delivered < config.outbox.batchSize) break;
          }
        },
      },
      {
        // Deliver what is due, time out what is late, mark silent services unhealthy.
        name: 'deadline-enforcer',
        intervalMs: config.deadlineSweepIntervalMs,
        run: async () => {
          await enforceDeadlines(kernel, tables, this.random);
          await dispatchPending(kernel, tables, this.random);
          if ((await watchHealth(kernel, tables, config.healthSilenceMs)) > 0) this.poke();
        },
      },
      {
        name: 'ttl-sweeper',
        intervalMs: config.ttlSweepIntervalMs,
        run: async () => {
          if ((await sweepTtl(kernel, tables)) > 0) this.poke();
        },
      },
      {
        name: 'retention-cleaner',
        intervalMs: config.retentionCleanupIntervalMs,
        run: async () => {
          await cleanRetention(kernel, tables, config.outboxRetentionDays);
          await cleanDelegations(kernel, tables, config.delegationRetentionDays);
        },
      },
    ];
  }

  /** As reconcile phases: a tick runs a worker only once its own interval has passed. */
  get phases(): ReconcilePhase[] {
    return this.workers.map((w) => ({
      name: w.name,
      run: () =>
        this.clock.now() - (this.lastRun.get(w.name) ?? 0) >= w.intervalMs
          ? this.runWorker(w)
          : Promise.resolve(),
    }));
  }

  start(): void {
    for (const w of this.workers) this.schedule(w, w.intervalMs);
  }

  /** Publish soon: a change just wrote outbox events. */
  poke(): void {
    const w = this.workers[0];
    if (w) this.schedule(w, 0);
  }

  /** Dispatch soon: an invocation was enqueued or an attempt ended. */
  pokeInvocations(): void {
    const w = this.workers[1];
    if (w) this.schedule(w, 0);
  }

  /** Run one worker now (tests, the CLI's `outbox flush`). */
  runNow(name: string): Promise<void> {
    const w = this.workers.find((x) => x.name === name);
    if (!w) throw new Error(`no worker ${name}`);
    return this.runWorker(w);
  }

  private schedule(w: Worker, ms: number): void {
    if (this.stopped) return;
    const old = this.timers.get(w.name);
    if (old !== undefined) this.clock.clearTimeout(old);
    this.timers.set(
      w.name,
      this.clock.setTimeout(() => {
        this.timers.delete(w.name);
        void this.runWorker(w).finally(() => {
          if (!this.timers.has(w.name)) this.schedule(w, w.intervalMs);
        });
      }, ms),
    );
  }

  private runWorker(w: Worker): Promise<void> {
    const current = this.running.get(w.name);
    if (current) return current;
    this.lastRun.set(w.name, this.clock.now());
    const p = exclusive(this.tables, w.name, () => w.run())
      .then(() => undefined)
      .catch((error: unknown) => {
        if (!this.stopped) this.log.error({ worker: w.name, err: error }, `coordinator ${w.name} failed`);
      })
      .finally(() => this.running.delete(w.name));
    this.running.set(w.name, p);
    return p;
  }

  async stop(): Promise<void> {
    this.stopped = true;
    for (const t of this.timers.values()) this.clock.clearTimeout(t);
    this.timers.clear();
    // A run in progress finishes, within the shutdown grace (SHUTDOWN_GRACE_MS); one that takes
    // longer is not waited for (closing the store ends it; its try-lock ends with its connection).
    let cut: TimerHandle | undefined;
    const grace = new Promise<void>((resolve) => {
      cut = this.clock.setTimeout(() => {
        this.log.warn(
          { workers: [...this.running.keys()] },
          'coordinator workers outlived the shutdown grace',
        );
        resolve();
      }, this.kernel.config.shutdownGraceMs);
    });
    await Promise.race([Promise.allSettled([...this.running.values()]), grace]);
    if (cut !== undefined) this.clock.clearTimeout(cut);
    await Promise.allSettled(this.sinks.map((s) => s.close()));
  }
}
