import type { PluginContext, PluginInstance, ReconcilePhase } from '../../contract/plugin.ts';
import type { Kernel } from '../../kernel/kernel.ts';
import type { LogEvent } from '../../store/events.ts';
import type { Log } from '../../util/log.ts';
import { gate, spawnFor } from './dispatch.ts';
import { follow, settleDone } from './follow.ts';
import { TASK_DONE, type Tables } from './schema.ts';
import { isDone, taskById } from './tasks.ts';

/** Tasks evaluated at once (each is its own write unit; the writer group-commits them). */
const IN_FLIGHT = 16;
/** Rows a reconcile phase takes per tick. */
const PHASE_BATCH = 500;

/**
 * The event path of the task tree: committed events queue the tasks they concern, and a
 * worker evaluates them off the commit path — dispatch what may run, move what runs along
 * with its session, settle what is done. The reconcile phases find what the event path
 * missed (another node's commits, a crash between two steps) and feed the same queue.
 */
export class Engine implements PluginInstance {
  private readonly tasks = new Set<string>();
  /** Tasks whose dependents (or children, or parent) need a look: resolved by the worker. */
  private readonly dependentsOf = new Set<string>();
  private readonly childrenOf = new Set<string>();
  private readonly parentOf = new Set<string>();
  private readonly sessions = new Set<string>();
  /** Sessions of tasks, as far as this node has seen: other sessions' events cost nothing. */
  private readonly taskSessions = new Set<string>();
  /** Zones with ready tasks a spawn limit held back: a session stopping there may free room. */
  private readonly blocked = new Set<string>();
  private running: Promise<void> | undefined;
  private stopped = false;

  readonly phases: readonly ReconcilePhase[] = [
    { name: 'dispatch', run: () => this.dispatchPhase(), scope: 'cluster', seed: 'dispatch' },
    { name: 'follow', run: () => this.followPhase(), scope: 'cluster' },
    { name: 'orphan-reparent', run: () => this.orphanPhase(), scope: 'cluster', seed: 'orphan-reparent' },
  ];

  constructor(
    readonly kernel: Kernel,
    readonly tables: Tables,
    private readonly log: Log,
    /** What the loaded plugins put ahead of a task session's first prompt. */
    private readonly contextOf: PluginContext['startContext'] = async () => [],
  ) {}

  async start(): Promise<void> {
    const rows = await this.tables.reader
      .selectFrom('orchestration_tasks')
      .select(['session_id'])
      .where('status', 'in', ['ready', 'running', 'waiting', 'review'])
      .where('parent_id', 'is not', null)
      .execute();
    for (const r of rows) if (r.session_id) this.taskSessions.add(r.session_id);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    await this.running;
  }

  /** On the writer's commit path: only look at types and queue. */
  onCommit(events: readonly LogEvent[]): void {
    let queued = false;
    for (const e of events) {
      const p = e.payload;
      switch (e.type) {
        case 'session.status':
          if (e.session_id && this.taskSessions.has(e.session_id)) {
            this.sessions.add(e.session_id);
            queued = true;
          }
          if (p.to === 'stopped' && this.blocked.has(e.zone)) {
            this.blocked.delete(e.zone);
            this.readyOf(e.zone).catch((error) => {
              this.log.error({ err: error }, 'orchestration: reading ready tasks failed');
            });
          }
          break;
        case 'task.created':
        case 'task.released':
        case 'task.retried':
        case 'task.adopted':
        case 'task.depends':
          this.tasks.add(String(p.task));
          queued = true;
          break;
        case 'task.dispatched':
          this.taskSessions.add(String(p.session));
          // Children waiting for their parent to start may go now.
          this.childrenOf.add(String(p.task));
          queued = true;
          break;
        case 'task.status':
          if (isDone(p.to as never)) {
            this.dependentsOf.add(String(p.task));
            this.parentOf.add(String(p.task));
            queued = true;
          } else if (p.to === 'pending') {
            this.tasks.add(String(p.task));
            queued = true;
          } else if (p.to === 'waiting' || p.from === 'waiting') {
            // Its dependents say what they wait on: the operator, while it waits.
            this.dependentsOf.add(String(p.task));
            queued = true;
          }
          break;
      }
    }
    if (queued) this.kick();
  }

  /** Evaluate a task now (after a syscall changed it), through the same queue. */
  poke(id: string): void {
    this.tasks.add(id);
    this.kick();
  }

  /** Wait until the queue is empty (tests, shutdown). */
  async idle(): Promise<void> {
    while (this.running) await this.running;
  }

  private kick(): void {
    if (this.running || this.stopped) return;
    this.running = this.drain()
      .catch((error) => this.log.error({ err: error }, 'orchestration: the task worker failed'))
      .finally(() => {
        this.running = undefined;
        if (this.hasWork() && !this.stopped) this.kick();
      });
  }

  private hasWork(): boolean {
    return (
      this.tasks.size +
        this.sessions.size +
        this.dependentsOf.size +
        this.childrenOf.size +
        this.parentOf.size >
      0
    );
  }

  private async drain(): Promise<void> {
    // Let the rest of this commit's listeners run first.
    await Promise.resolve();
    while (this.hasWork() && !this.stopped) {
      const ids = await this.resolveQueued().catch((error) => {
        // What was queued is lost to the event path; the reconcile phases find it again.
        this.log.error({ err: error }, 'orchestration: reading the queue failed');
        return new Set<string>();
      });
      const list = [...ids];
      let next = 0;
      const worker = async () => {
        while (next < list.length && !this.stopped) {
          const id = list[next++] as string;
          await this.evaluate(id).catch((error) => {
            this.log.error({ err: error }, `orchestration: task ${id}`);
          });
        }
      };
      await Promise.all(Array.from({ length: Math.min(IN_FLIGHT, list.length) }, worker));
    }
  }

  /** The task ids the queued sessions, dependents, children and parents stand for. */
  private async resolveQueued(): Promise<Set<string>> {
    const ids = new Set(this.tasks);
    this.tasks.clear();
    const db = this.tables.reader;
    const take = (s: Set<string>) => {
      const out = [...s];
      s.clear();
      return out;
    };
    const sessions = take(this.sessions);
    if (sessions.length > 0) {
      for (const r of await db
        .selectFrom('orchestration_tasks')
        .select('id')
        .where('session_id', 'in', sessions)
        .execute()) {
        ids.add(r.id);
      }
    }
    const deps = take(this.dependentsOf);
    if (deps.length > 0) {
      const rows = await db
        .selectFrom('orchestration_task_deps')
        .innerJoin('orchestration_tasks', 'orchestration_tasks.id', 'orchestration_task_deps.task_id')
        .select('orchestration_tasks.id')
        .where('orchestration_task_deps.depends_on', 'in', deps)
        .where('orchestration_tasks.status', 'in', ['pending', 'ready'])
        .execute();
      for (const r of rows) ids.add(r.id);
    }
    const parents = take(this.childrenOf);
    if (parents.length > 0) {
      const rows = await db
        .selectFrom('orchestration_tasks')
        .select('id')
        .where('parent_id', 'in', parents)
        .where('status', 'in', ['pending', 'ready'])
        .execute();
      for (const r of rows) ids.add(r.id);
    }
    const kids = take(this.parentOf);
    if (kids.length > 0) {
      const rows = await db
        .selectFrom('orchestration_tasks')
        .select('parent_id')
        .where('id', 'in', kids)
        .execute();
      for (const r of rows) if (r.parent_id) ids.add(r.parent_id);
      // A task that just finished: hand its open children up (in the same unit as its
      // transition already; this catches a transition made elsewhere, e.g. by hand).
      for (const k of kids) ids.add(k);
    }
    return ids;
  }

  /** Ready tasks of a zone, once more (a spawn limit may have room now). */
  private async readyOf(zone: string): Promise<void> {
    const rows = await this.tables.reader
      .selectFrom('orchestration_tasks')
      .select('id')
      .where('zone', '=', zone)
      .where('status', '=', 'ready')
      .limit(PHASE_BATCH)
      .execute();
    for (const r of rows) this.tasks.add(r.id);
    this.kick();
  }

  /** One look at one task: what its state calls for, in one write unit, then a spawn if it may run. */
  async evaluate(id: string): Promise<void> {
    const pre = await taskById(this.tables.reader, id);
    if (!pre?.parent_id) return; // gone, or the root
    let pending = false;
    if (pre.status === 'running' && pre.session_id) {
      // Whatever its status reads now: it may be idle by the time the unit below reads it, and
      // input written before that (an answer to a resumed session) must still count as due.
      const s = await this.kernel.sessionState(pre.session_id);
      if (s && s.status !== 'stopped') pending = await this.kernel.hasPendingInput(pre.session_id);
    }
    const ready = await this.tables.write(async (tx) => {
      const t = await taskById(tx.db, id);
      if (!t?.parent_id) return null;
      if (t.status === 'pending' || t.status === 'ready') return gate(tx, this.kernel, t);
      if (t.status === 'running' || t.status === 'review' || t.status === 'waiting') {
        await follow(tx, this.kernel, t, pending);
        return null;
      }
      await settleDone(tx, this.kernel, t);
      if (t.session_id) this.taskSessions.delete(t.session_id);
      return null;
    });
    if (!ready) return;
    const outcome = await spawnFor(this.kernel, this.tables, ready, this.contextOf);
    if (outcome === 'deferred') this.blocked.add(ready.zone);
  }

  // ---------------------------------------------------------------- the backstop

  /** Pending or ready tasks whose dependencies are all complete (the rest wait on an event). */
  private async dispatchPhase(): Promise<void> {
    const rows = await this.tables.reader
      .selectFrom('orchestration_tasks as t')
      .select('t.id')
      .where('t.status', 'in', ['pending', 'ready'])
      .where('t.held', '=', 0)
      .where('t.parent_id', 'is not', null)
      .where(({ not, exists, selectFrom }) =>
        not(
          exists(
            selectFrom('orchestration_task_deps as d')
              .innerJoin('orchestration_tasks as x', 'x.id', 'd.depends_on')
              .select('d.task_id')
              .whereRef('d.task_id', '=', 't.id')
              .where('x.status', '!=', 'complete'),
          ),
        ),
      )
      .orderBy('t.id')
      .limit(PHASE_BATCH)
      .execute();
    await this.evaluateAll(rows.map((r) => r.id));
  }

  /**
   * Tasks out of step with their sessions: running with a stopped session; and, among live
   * sessions (so the cost is the live set, not the history), running with an idle one that
   * has a result, in review with a busy one, or done with one nobody asked to stop.
   */
  private async followPhase(): Promise<void> {
    const ids = new Set<string>();
    // Running tasks (the status index) and the states of their sessions, by key.
    const running = await this.tables.reader
      .selectFrom('orchestration_tasks')
      .select(['id', 'session_id'])
      .where('status', '=', 'running')
      .where('session_id', 'is not', null)
      .execute();
    const stopped = new Set(
      (await this.kernel.sessionStates(running.map((r) => r.session_id as string)))
        .filter((s) => s.status === 'stopped')
        .map((s) => s.id),
    );
    for (const r of running) {
      if (ids.size >= PHASE_BATCH) break;
      if (stopped.has(r.session_id as string)) ids.add(r.id);
    }
    // Live sessions, and the tasks (not the root) whose sessions they are.
    const live = await this.kernel.liveSessions();
    let found = 0;
    for (let i = 0; i < live.length && found < PHASE_BATCH; i += PHASE_BATCH) {
      const page = new Map(live.slice(i, i + PHASE_BATCH).map((s) => [s.id, s]));
      const tasks = await this.tables.reader
        .selectFrom('orchestration_tasks')
        .select(['id', 'status', 'session_id'])
        .where('session_id', 'in', [...page.keys()])
        .where('parent_id', 'is not', null)
        .execute();
      for (const t of tasks) {
        const s = page.get(t.session_id as string);
        if (!s || found >= PHASE_BATCH) continue;
        const drifted =
          (t.status === 'running' && s.status === 'idle' && s.hasMessage) ||
          (t.status === 'review' && (s.status === 'running' || s.status === 'pending')) ||
          (TASK_DONE.includes(t.status) && s.termDeadline === null);
        if (drifted) {
          ids.add(t.id);
          found++;
        }
      }
    }
    await this.evaluateAll([...ids]);
  }

  /** Open tasks whose parent completed or failed: hand them up. */
  private async orphanPhase(): Promise<void> {
    const rows = await this.tables.reader
      .selectFrom('orchestration_tasks as t')
      .innerJoin('orchestration_tasks as p', 'p.id', 't.parent_id')
      .select('p.id')
      .distinct()
      .where('t.status', 'not in', TASK_DONE)
      .where('p.status', 'in', ['complete', 'failed'])
      .limit(PHASE_BATCH)
      .execute();
    await this.evaluateAll(rows.map((r) => r.id));
  }

  private async evaluateAll(ids: string[]): Promise<void> {
    if (ids.length === 0) return;
    for (const id of ids) this.tasks.add(id);
    this.kick();
    await this.idle();
  }
}
