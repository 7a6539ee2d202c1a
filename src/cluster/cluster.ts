import type { Kernel } from '../kernel/kernel.ts';
import type { Store } from '../store/store.ts';
import type { Clock, TimerHandle } from '../util/clock.ts';
import type { Log } from '../util/log.ts';
import { ClusterConnection } from './channel.ts';
import type { ClusterConfig } from './config.ts';
import { LeaseClient } from './lease-client.ts';
import {
  fenceAfterMs,
  leaseCallMaxMs,
  leaseCallMs,
  leaseMarginMs,
  lifelineAfterMs,
  renewEveryMs,
  takeoverGraceMs,
} from './lease-timing.ts';
import { sessionsToRun } from './own-sessions.ts';
import { join, leave, otherHolderWithin, renewWithin } from './registry.ts';
import { CommitTail } from './tail.ts';
import { lostNodes, type TakeoverResult, takeOverLost } from './takeover.ts';

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
  /** The epoch of the lease this node holds or tries to renew (kept while it is fenced). */
  private epoch = 0;
  private timer: TimerHandle | undefined;
  /** Not following the others yet (before `start`) or no more (after `stop`). */
  private stopped = true;
  /** `stop` was called: no more renewals, no rejoin. */
  private closed = false;
  /** When the last successful renewal (or the join) was sent, on this node's clock. */
  private renewedAt = 0;
  /** The same moment on the process's monotonic clock (`performance.now()`). */
  private renewedMono = 0;
  private fencing: Promise<void> | undefined;
  /** The epoch another server holds this node's id under, while this one stands aside for it. */
  private displacedBy: number | null = null;
  /** The heartbeat in flight, if any: `stop` waits for it before the store closes. */
  private beating: Promise<void> | undefined;
  /** The lease's own connection: every renewal bounded well inside the lease. */
  private readonly lease: LeaseClient;
  /** Fires when the lease was not renewed in time, whatever the calls in flight are doing. */
  private watchdog: TimerHandle | undefined;
  /** Where the adopt backstop's next page of this node's sessions starts (own-sessions.ts). */
  private ownedAfter = '';
  /** Sessions the last adopt tick found without a process here (started if still so at the next). */
  private missing = new Set<string>();

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
      leaseCallMaxMs(o.config.leaseMs),
      `warren ${o.kernel.node.id} lease`,
    );
  }

  get nodeId(): string {
    return this.o.kernel.node.id;
  }

  /**
   * Join (or rejoin) as a new epoch. At boot, before the kernel starts: its boot (recover,
   * resume) then claims sessions under this epoch, and commits are announced from the first
   * one on. Renewals start here, not at `start`: a kernel boot slower than the lease on a
   * loaded machine must not fence the node it boots.
   */
  async join(): Promise<void> {
    const { store, kernel, config, clock } = this.o;
    await this.conn.get();
    store.writer.notify = { channel: this.conn.channel, node: this.nodeId };
    // Nothing is written once the lease has lapsed, not even in the moment after a pause before
    // the watchdog has run (the rejoin below excepted, and a node leaving).
    store.writer.mayWrite = () => this.closed || !this.lapsed();
    // A transaction may idle until 1.5 M past this node's fence as it stands when it begins:
    // a node paused mid-transaction is rolled back by the server before another node can take
    // its sessions (fence + 2M), and a running node's transactions get most of a lease.
    const margin = leaseMarginMs(config.leaseMs);
    store.writer.idleLimitMs = () =>
      Math.max(0, this.renewedAt + fenceAfterMs(config.leaseMs) - clock.now()) + Math.floor(1.5 * margin);
    // Before the statement is sent: the lease the database records starts no earlier.
    const at = clock.now();
    this.epoch = await join(
      store,
      { id: this.nodeId, address: null, runtimes: this.canRun() },
      config.leaseMs,
    );
    kernel.node.epoch = this.epoch;
    this.displacedBy = null;
    kernel.node.clustered = true;
    kernel.node.once = (name, fn) => this.conn.once(name, fn);
    this.renewed(at);
    if (this.stopped) await this.tail.prime();
    if (!this.timer && !this.beating) this.beat();
  }

  /** After the kernel started: follow the others and take part in the phases. */
  async start(): Promise<void> {
    this.stopped = false;
    this.tail.start();
    const { kernel } = this.o;
    kernel.addReconcilePhase({ name: 'cluster:takeover', scope: 'cluster', run: () => this.takeover() });
    kernel.addReconcilePhase({ name: 'cluster:adopt', scope: 'node', run: () => this.adoptMine() });
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.closed = true;
    if (this.timer) this.o.clock.clearTimeout(this.timer);
    this.timer = undefined;
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
    if (this.closed) return;
    const { clock, config } = this.o;
    this.timer = clock.setTimeout(
      () => {
        this.timer = undefined;
        this.beating = this.heartbeat().finally(() => {
          this.beating = undefined;
          this.beat();
        });
      },
      renewEveryMs(config.leaseMs, config.heartbeatMs),
    );
  }

  async heartbeat(): Promise<void> {
    if (this.closed) return;
    const { clock, config, log } = this.o;
    const at = clock.now();
    const toFence = this.isFenced() ? 0 : this.renewedAt + fenceAfterMs(config.leaseMs) - at;
    let held: boolean;
    try {
      held = await renewWithin(
        this.lease,
        { id: this.nodeId, epoch: this.epoch },
        at,
        config.leaseMs,
        this.address(),
        leaseCallMs(config.leaseMs, toFence),
        this.canRun(),
      );
    } catch (error) {
      // Only the watchdog fences for time (renewed): one rule, on this node's clock, whatever
      // this call did. The next heartbeat tries again on a fresh connection.
      log.warn({ err: error }, 'renewing the node lease failed');
      return;
    }
    if (!held) {
      // A later epoch of this node's id holds a lease: another server joined under it (a
      // second server given the same id, or this one restarted while this process was
      // stalled), or rarely a join of this one whose answer was lost. Rejoining would fence it
      // in turn, and two servers would take the id from each other at every heartbeat: the
      // later keeps it; this one stays fenced while that lease is held, and joins again after.
      this.displacedBy = await otherHolderWithin(
        this.lease,
        { id: this.nodeId, epoch: this.epoch },
        at,
        leaseCallMs(config.leaseMs, 0),
      ).catch(() => null);
      if (this.displacedBy !== null) {
        await this.fence(this.displacement(), false);
        return;
      }
      // Declared lost (its sessions handed on): join again.
      await this.fence('lease lost to the other nodes', true);
      return;
    }
    this.renewed(at);
    if (this.stopped || this.isFenced()) return;
    // Lost nodes are noticed within a heartbeat, not a reconcile interval.
    await this.takeover().catch((error) => {
      log.warn({ err: error }, 'taking over lost nodes failed');
    });
  }

  /**
   * A renewal sent at `at` (this node's clock, so never later than the lease the database
   * holds) succeeded: the watchdog fences at `at` + the lease minus the margin unless renewed
   * again by then, before any other node may take our sessions (lease-timing.ts). A node its
   * own watchdog fenced whose epoch is still the current one (nobody took its sessions) serves
   * again at once.
   */
  private renewed(at: number): void {
    if (at < this.renewedAt) return; // an older renewal's answer: the newer one counts
    this.renewedAt = at;
    const { clock, config, kernel } = this.o;
    this.renewedMono = performance.now() - (clock.now() - at);
    // Every agent's watcher ends it past this unless beaten again: this node may be paused or
    // cut off by then, and nothing else would end it before another node takes its session.
    kernel.node.lifelines.extend(at + lifelineAfterMs(config.leaseMs) - clock.now());
    if (this.watchdog) clock.clearTimeout(this.watchdog);
    this.watchdog = clock.setTimeout(
      () => {
        this.watchdog = undefined;
        // After a stall of this process timers run before pending I/O is read: let a renewal
        // answer already in the socket count first (setImmediate runs after the poll phase).
        setImmediate(() => {
          if (this.closed || this.renewedAt !== at || this.isFenced()) return;
          void this.fence('lease not renewed within the lease minus its safety margin', false);
        });
      },
      Math.max(0, at + fenceAfterMs(config.leaseMs) - clock.now()),
    );
    if (this.isFenced()) void this.resume(at);
  }

  /**
   * Serve again under the same epoch after a fence by the watchdog alone: the renewal sent at
   * `at` found the epoch current and live, so no other node took (or may take) our sessions.
   * The agents ended at the fence are started again. Waits for the fence to finish first.
   */
  private async resume(at: number): Promise<void> {
    await this.fencing;
    const { kernel, clock, config, log, store } = this.o;
    if (this.closed || !this.isFenced() || this.renewedAt !== at) return;
    // Too late to count (the answer came after the node had to fence): the next one will do.
    if (at + fenceAfterMs(config.leaseMs) <= clock.now()) return;
    kernel.node.epoch = this.epoch;
    log.warn({ node: this.nodeId, epoch: this.epoch }, 'lease renewed again: the node serves again');
    try {
      const mine = await store.reader
        .selectFrom('sessions')
        .select('id')
        .where('owner_node', '=', this.nodeId)
        .where('owner_epoch', '=', this.epoch)
        .where('status', 'in', ['pending', 'running', 'idle'])
        .execute();
      kernel.adopt(mine.map((r) => r.id).filter((id) => !kernel.runsHere(id)));
    } catch (error) {
      log.warn({ err: error }, 'restarting the agents after the lease came back failed');
    }
  }

  /**
   * Whether the lease has lapsed since its last renewal, on the node's clock and on the
   * process's monotonic one: the writer then refuses everything but the rejoin, even before
   * the watchdog has run (the moment after a pause). Both must say so: they advance together
   * in a running node, and a test that moves the node's clock ahead by hours (a schedule's
   * downtime) has not paused the node.
   */
  private lapsed(): boolean {
    const window = fenceAfterMs(this.o.config.leaseMs);
    return this.o.clock.now() >= this.renewedAt + window && performance.now() >= this.renewedMono + window;
  }

  /** Whether this node's writes are stopped: fenced, its lease not (yet) held again. */
  private isFenced(): boolean {
    return this.o.kernel.node.epoch === 0;
  }

  /** Whether this node holds no lease now (fenced, not renewed or joined again yet): it must not write. */
  fenced(): boolean {
    return !this.closed && this.epoch !== 0 && this.isFenced();
  }

  /**
   * Why this node is degraded, from the cluster's side: its lease is not held (fenced, not
   * renewed or joined again yet). Null while it holds one.
   */
  degraded(): { reason: string; since: number } | null {
    if (!this.fenced()) return null;
    return {
      reason: `node fenced: ${this.displacedBy === null ? 'its lease is not held; renewing it or joining again' : this.displacement()}`,
      since: this.renewedAt,
    };
  }

  /** Why this node stands aside, while `displacedBy` says another server holds its id. */
  private displacement(): string {
    return `another server holds node id ${this.nodeId} (epoch ${this.displacedBy}); joining again once that lease lapses (two servers must not share a node id)`;
  }

  /**
   * What this node can run now, as the `nodes` row records it at each renewal: its runtimes
   * and the environments of the runners connected to it, so a lost node's runner sessions go
   * to a node their runner is connected to (takeover.ts).
   */
  private canRun(): string[] {
    return [...this.o.runtimes, ...this.o.kernel.onlineEnvironments()];
  }

  private address(): string | null {
    return this.o.kernel.config.publicUrl;
  }

  /**
   * Stop writing and end every agent process this node runs: its sessions may soon run, or
   * already run, elsewhere (their reports would be refused anyway). `rejoin`: the lease was
   * lost (declared lost, sessions handed on), so join again as a new epoch and restart what is
   * still ours; otherwise (the watchdog) the heartbeats go on renewing, and `resume` serves
   * again under the same epoch if the database still has it.
   */
  private fence(why: string, rejoin: boolean): Promise<void> {
    this.fencing ??= (async () => {
      const { kernel, log, store } = this.o;
      if (!this.isFenced()) {
        log.error({ node: this.nodeId, epoch: this.epoch }, `node fenced: ${why}; ending its agents`);
        // No epoch matches 0: from here no report of this node's agents is recorded (their
        // exits included), whoever owns their sessions now.
        kernel.node.epoch = 0;
        await kernel.stopAgents();
      }
      if (!rejoin || this.closed) return;
      try {
        await this.join();
        // Sessions still ours (nobody took them): back under the new epoch. Those the
        // others took are theirs.
        const mine = await store.reader
          .selectFrom('sessions')
          .select('id')
          .where('owner_node', '=', this.nodeId)
          .where('status', 'in', ['pending', 'running', 'idle'])
          .execute();
        kernel.adopt(mine.map((r) => r.id));
      } catch (error) {
        log.error({ err: error }, 'rejoining the cluster failed; retrying at the next heartbeat');
      }
    })().finally(() => {
      this.fencing = undefined;
    });
    return this.fencing;
  }

  /**
   * Whether this node holds its lease now, on its own clock: not fenced, and its last renewal
   * recent enough that its watchdog has not had to fire yet (a timer may be late after a stall).
   */
  private holdsOwnLease(): boolean {
    const { clock, config } = this.o;
    return !this.isFenced() && clock.now() < this.renewedAt + fenceAfterMs(config.leaseMs);
  }

  private async takeover(): Promise<void> {
    // A node whose own lease is not current declares nobody lost and claims nothing: its own
    // view of the lease is what is in doubt (after an outage every lease looks expired). The
    // takeover's transaction checks the same on the database (takeover.ts).
    if (!this.holdsOwnLease()) return;
    const { store, clock, config, kernel } = this.o;
    const now = clock.now();
    const grace = takeoverGraceMs(config.leaseMs);
    // Outside the lock: a lost node may hold it (lostNodes ends its connections, releasing it).
    const lost = await lostNodes(store, now, this.nodeId, grace);
    if (lost.length === 0) return;
    let done: TakeoverResult[] = [];
    await kernel.node.once('cluster:takeover', async () => {
      done = await takeOverLost(store, now, { id: this.nodeId, epoch: this.epoch }, grace, lost);
    });
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
   * The backstop of a handover and of every fence, outage and failed start: sessions this node
   * owns in a live status, or that a lost node left to it (or to nobody), that do not run
   * here are started (own-sessions.ts). Each reconcile tick, so no session stays `idle` or
   * `running` without a process however its restart was missed.
   */
  private async adoptMine(): Promise<void> {
    if (!this.holdsOwnLease()) return; // resumed when the lease is held again
    const { kernel } = this.o;
    const { ids, next } = await sessionsToRun(
      this.o.store,
      this.nodeId,
      this.o.runtimes,
      kernel.onlineEnvironments(),
      this.ownedAfter,
    );
    const missing = new Set(ids.filter((id) => !kernel.runsHere(id)));
    // Only what was missing at the previous tick too: an agent that just exited has its exit
    // in flight (its row still says idle) and must not be started beside that record. So the
    // next tick reads the same page again when this one found any missing for the first time.
    const seen = this.missing;
    kernel.adopt([...missing].filter((id) => seen.has(id)));
    if ([...missing].every((id) => seen.has(id))) this.ownedAfter = next;
    this.missing = missing;
  }
}
