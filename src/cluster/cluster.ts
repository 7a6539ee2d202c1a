import type { Kernel } from '../kernel/kernel.ts';
import type { Store } from '../store/store.ts';
import type { Clock, TimerHandle } from '../util/clock.ts';
import type { Log } from '../util/log.ts';
import { ClusterConnection } from './channel.ts';
import type { ClusterConfig } from './config.ts';
import { LeaseClient } from './lease-client.ts';
import { join, leave, renewWithin } from './registry.ts';
import { CommitTail } from './tail.ts';
import { NODE_LOST, takeOverLost } from './takeover.ts';

export interface ClusterOptions {
  store: Store;
  kernel: Kernel;
  clock: Clock;
  log: Log;
  config: ClusterConfig;
  /** The PostgreSQL server (without `?schema=`) and the schema the store lives in. */
  url: string;
  schema: string | undefined;
  /** The runtimes this node can run: sessions of a lost node go where their runtime is. */
  runtimes: readonly string[];
}

/**
 * This node's part in a cluster of warren nodes on one PostgreSQL database (docs/scaling.md):
 * it joins (a lease and a fencing epoch), renews its lease, hears the other nodes' commits
 * (LISTEN/NOTIFY plus a bounded poll, read by cursor), runs cluster-wide phases under
 * try-locks, takes over the sessions of lost nodes, and fences itself when its own lease is
 * gone. Nothing here is needed on SQLite, where one node owns the file.
 */
export class Cluster {
  private readonly conn: ClusterConnection;
  readonly tail: CommitTail;
  private epoch = 0;
  private timer: TimerHandle | undefined;
  private stopped = true;
  /** When this node last renewed its lease (its clock). */
  private renewedAt = 0;
  private fencing: Promise<void> | undefined;
  /** The heartbeat in flight, if any: `stop` waits for it before the store closes. */
  private beating: Promise<void> | undefined;
  /** The lease's own connection: every renewal bounded well inside the lease. */
  private readonly lease: LeaseClient;
  /** Fires when the lease was not renewed in time, whatever the calls in flight are doing. */
  private watchdog: TimerHandle | undefined;

  constructor(private readonly o: ClusterOptions) {
    this.tail = new CommitTail(o.store, o.clock, o.config.pollMs, o.log);
    this.conn = new ClusterConnection(
      o.url,
      o.schema,
      (notice) => this.tail.notified(notice),
      // Notifications may have been missed while disconnected: read by cursor now.
      () => this.tail.kick(),
      (error) => o.log.warn({ err: error }, 'cluster connection lost; reconnecting'),
      `warren ${o.kernel.node.id} listen`,
    );
    this.lease = new LeaseClient(
      o.url,
      o.schema,
      leaseCallMs(o.config.leaseMs),
      `warren ${o.kernel.node.id} lease`,
    );
  }

  get nodeId(): string {
    return this.o.kernel.node.id;
  }

  /**
   * Join before the kernel starts: its boot (recover, resume) then claims sessions under this
   * epoch, and commits are announced from the first one on.
   */
  async join(): Promise<void> {
    const { store, kernel, config } = this.o;
    await this.conn.get();
    store.writer.notify = { channel: this.conn.channel, node: this.nodeId };
    this.epoch = await join(
      store,
      { id: this.nodeId, address: null, runtimes: this.o.runtimes },
      config.leaseMs,
    );
    this.renewed(this.o.clock.now());
    kernel.node.epoch = this.epoch;
    kernel.node.clustered = true;
    kernel.node.once = (name, fn) => this.conn.once(name, fn);
    if (this.stopped) await this.tail.prime();
  }

  /** After the kernel started: follow the others, keep the lease, take part in the phases. */
  async start(): Promise<void> {
    this.stopped = false;
    this.tail.start();
    const { kernel } = this.o;
    kernel.addReconcilePhase({ name: 'cluster:takeover', scope: 'cluster', run: () => this.takeover() });
    kernel.addReconcilePhase({ name: 'cluster:adopt', scope: 'node', run: () => this.adoptMine() });
    this.beat();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) this.o.clock.clearTimeout(this.timer);
    if (this.watchdog) this.o.clock.clearTimeout(this.watchdog);
    await this.tail.stop();
    await this.beating;
    await this.fencing;
    await leave(this.o.store, { id: this.nodeId, epoch: this.epoch }).catch(() => {});
    this.o.store.writer.notify = undefined;
    this.lease.close();
    await this.conn.close();
  }

  /** Renew the lease now and then; take over lost nodes at the same pace (not only each reconcile tick). */
  private beat(): void {
    if (this.stopped) return;
    this.timer = this.o.clock.setTimeout(() => {
      this.beating = this.heartbeat().finally(() => {
        this.beating = undefined;
        this.beat();
      });
    }, this.o.config.heartbeatMs);
  }

  async heartbeat(): Promise<void> {
    if (this.stopped) return;
    const { clock, config, log } = this.o;
    const now = clock.now();
    let held: boolean;
    try {
      held = await renewWithin(
        this.lease,
        { id: this.nodeId, epoch: this.epoch },
        now,
        config.leaseMs,
        this.address(),
      );
    } catch (error) {
      log.warn({ err: error }, 'renewing the node lease failed');
      // Cut off from the database too long: the others may own our sessions soon. (The
      // watchdog fences on its own clock as well, even while this call hangs.)
      if (clock.now() - this.renewedAt > fenceAfterMs(config.leaseMs))
        await this.fence('lease not renewed in time');
      return;
    }
    if (!held) {
      await this.fence('lease lost to the other nodes');
      return;
    }
    this.renewed(now);
    if (this.stopped) return;
    // Lost nodes are noticed within a heartbeat, not a reconcile interval.
    await this.o.kernel.node
      .once('cluster:takeover', () => this.takeover())
      .catch((error) => {
        log.warn({ err: error }, 'taking over lost nodes failed');
      });
  }

  /**
   * The lease was renewed at `at` (this node's clock, taken before the statement was sent, so
   * never later than the lease the database holds): fence on our own clock at `at` + the lease
   * minus the margin unless renewed again by then, before any other node may take our sessions.
   */
  private renewed(at: number): void {
    this.renewedAt = at;
    const { clock, config } = this.o;
    if (this.watchdog) clock.clearTimeout(this.watchdog);
    this.watchdog = clock.setTimeout(
      () => {
        this.watchdog = undefined;
        if (this.stopped || this.renewedAt !== at || this.o.kernel.node.epoch === 0) return;
        void this.fence('lease not renewed within the lease minus its safety margin');
      },
      Math.max(0, at + fenceAfterMs(config.leaseMs) - clock.now()),
    );
  }

  /** Whether this node holds no lease now (fenced, not joined again yet): it must not write. */
  fenced(): boolean {
    return !this.stopped && this.o.kernel.node.epoch === 0;
  }

  /**
   * Why this node is degraded, from the cluster's side: its lease is not held (fenced, not
   * joined again yet). Null while it holds one.
   */
  degraded(): { reason: string; since: number } | null {
    if (!this.fenced()) return null;
    return { reason: 'node fenced: its lease is not held; joining again', since: this.renewedAt };
  }

  private address(): string | null {
    return this.o.kernel.config.publicUrl;
  }

  /**
   * This node's lease is gone: its sessions may be running elsewhere already. End every agent
   * process it runs (their reports are refused anyway), then join again as a new epoch.
   */
  private fence(why: string): Promise<void> {
    this.fencing ??= (async () => {
      this.o.log.error({ node: this.nodeId, epoch: this.epoch }, `node fenced: ${why}; ending its agents`);
      // No epoch matches 0: from here no report of this node's agents is recorded (their
      // exits included), whoever owns their sessions now.
      this.o.kernel.node.epoch = 0;
      await this.o.kernel.stopAgents();
      try {
        await this.join();
        // Sessions still ours (the database was unreachable, nobody took them): back under
        // the new epoch. Those the others took are theirs.
        const mine = await this.o.store.reader
          .selectFrom('sessions')
          .select('id')
          .where('owner_node', '=', this.nodeId)
          .where('status', 'in', ['pending', 'running', 'idle'])
          .execute();
        this.o.kernel.adopt(mine.map((r) => r.id));
      } catch (error) {
        this.o.log.error({ err: error }, 'rejoining the cluster failed; retrying at the next heartbeat');
      }
    })().finally(() => {
      this.fencing = undefined;
    });
    return this.fencing;
  }

  private async takeover(): Promise<void> {
    const done = await takeOverLost(this.o.store, this.o.clock.now(), this.nodeId);
    for (const r of done) {
      const mine = Object.keys(r.moved).filter((id) => r.moved[id] === this.nodeId);
      this.o.log.warn(
        { node: r.node, sessions: Object.keys(r.moved).length, here: mine.length },
        'node lost: its sessions were handed to live nodes',
      );
      this.o.kernel.adopt(mine);
    }
  }

  /**
   * The backstop of a handover: sessions a lost node left to this one (or to nobody, when no
   * node could run them then) that are not running here yet.
   */
  private async adoptMine(): Promise<void> {
    const rows = await this.o.store.reader
      .selectFrom('sessions')
      .select('id')
      .where('status', '=', 'suspended')
      .where('suspend_reason', '=', NODE_LOST)
      .where((eb) => eb.or([eb('owner_node', '=', this.nodeId), eb('owner_node', 'is', null)]))
      .where('runtime', 'in', [...this.o.runtimes])
      .limit(500)
      .execute();
    this.o.kernel.adopt(rows.map((r) => r.id).filter((id) => !this.o.kernel.runsHere(id)));
  }
}

/**
 * The deadline of each lease call: a quarter of the lease (at most 2 s, at least 100 ms), so a
 * hung call leaves time for the next attempts before the node fences itself.
 */
export const leaseCallMs = (leaseMs: number): number =>
  Math.max(100, Math.min(2000, Math.floor(leaseMs / 4)));

/**
 * A node fences itself this long after its last renewal: the lease minus a safety margin of a
 * quarter lease, which must exceed the drift between the nodes' clocks over one lease
 * (docs/scaling.md). The others take its sessions only after the full lease.
 */
export const fenceAfterMs = (leaseMs: number): number => leaseMs - Math.floor(leaseMs / 4);
