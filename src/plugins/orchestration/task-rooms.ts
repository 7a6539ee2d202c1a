import type { ReconcilePhase } from '../../contract/plugin.ts';
import type { Kernel } from '../../kernel/kernel.ts';
import type { LogEvent } from '../../store/events.ts';
import type { Log } from '../../util/log.ts';
import { WarrenError } from '../../vocab/errors.ts';
import { KERNEL_ACTOR, operator } from '../../vocab/principal.ts';
import type { Tables, TaskAttachmentsTable } from './schema.ts';
import { forgetAttachment } from './task-targets.ts';

/** One session of a task to bring its durable attachments to. */
interface Job {
  task: string;
  session: string;
}

/** How many `task.dispatched` events one reconcile tick looks at, at most. */
const EVENTS_PER_TICK = 1000;

/**
 * Durable, task-keyed room attachments follow the task: each `task.dispatched` is queued
 * from the commit path and applied to the new session asynchronously (the commit listener
 * never waits on a query); a reconcile phase is the backstop. Its first run after a start
 * re-applies every missing one (a dispatch whose apply a crash cut off); later runs look
 * only at tasks dispatched since, through the log's (type, seq) index.
 */
export class TaskRooms {
  private readonly queue: Job[] = [];
  private draining: Promise<void> | undefined;
  private stopped = false;
  /** The log position the phase has looked at; undefined until its first (full) run. */
  private cursor: number | undefined;

  constructor(
    private readonly kernel: Kernel,
    private readonly tables: Tables,
    private readonly log: Log,
  ) {}

  readonly phase: ReconcilePhase = { name: 'task-rooms', run: () => this.reconcile(), scope: 'cluster' };

  onCommit(events: readonly LogEvent[]): void {
    for (const e of events) {
      if (e.type !== 'task.dispatched') continue;
      const task = e.payload.task;
      const session = e.payload.session ?? e.session_id;
      if (typeof task === 'string' && typeof session === 'string') this.queue.push({ task, session });
    }
    if (this.queue.length > 0) this.kick();
  }

  /** Let queued work finish; take no more. */
  async stop(): Promise<void> {
    this.stopped = true;
    this.queue.length = 0;
    await this.draining;
  }

  private kick(): void {
    if (this.draining || this.stopped) return;
    this.draining = this.drain().finally(() => {
      this.draining = undefined;
      if (this.queue.length > 0) this.kick();
    });
  }

  private async drain(): Promise<void> {
    for (let job = this.queue.shift(); job && !this.stopped; job = this.queue.shift()) {
      try {
        const rows = await this.tables.reader
          .selectFrom('orchestration_task_attachments')
          .selectAll()
          .where('task_id', '=', job.task)
          .execute();
        for (const row of rows) if (!(await this.apply(row, job.session))) break;
      } catch (error) {
        // The reconcile phase retries what this missed.
        this.log.error({ err: error }, `durable attachments of ${job.task}`);
      }
    }
  }

  /**
   * Attach `session` as the attachment says, on behalf of the operator who made it. False
   * when the session is gone (nothing more to do for it). A closed room is forgotten.
   */
  private async apply(row: TaskAttachmentsTable, session: string): Promise<boolean> {
    const by = operator(row.created_by.replace(/^operator:/, ''), row.zone);
    try {
      await this.kernel.roomAttach(by, session, row.stream_id, row.permission, row.mode);
      return true;
    } catch (error) {
      if (!(error instanceof WarrenError)) throw error;
      if (error.code === 'not_found' && error.details?.what === 'stream') {
        await this.tables.write((tx) =>
          forgetAttachment(tx, row.zone, row.task_id, row.stream_id, KERNEL_ACTOR, 'room closed'),
        );
        return true;
      }
      if (error.code === 'session_stopped' || error.code === 'not_found') return false;
      throw error;
    }
  }

  private async reconcile(): Promise<void> {
    const head = await this.kernel.logHead();
    if (this.cursor === undefined) {
      await this.applyMissing(undefined);
      this.cursor = head;
      return;
    }
    const read = await this.kernel.eventsOfType('task.dispatched', this.cursor, EVENTS_PER_TICK);
    const dispatched = read.filter((e) => e.seq <= head);
    const tasks = new Set<string>();
    for (const e of dispatched) {
      const task = e.payload.task;
      if (typeof task === 'string') tasks.add(task);
    }
    if (tasks.size > 0) await this.applyMissing([...tasks]);
    this.cursor = dispatched.length === EVENTS_PER_TICK ? dispatched.at(-1)!.seq : head;
  }

  /**
   * The durable attachments (of `tasks`, or all) whose task has a live session that does
   * not hold them: the attachments and their tasks' sessions from this plugin's tables, then
   * the kernel's reads by key of those sessions, rooms and fds, costing the attachments
   * looked at.
   */
  private async applyMissing(tasks: string[] | undefined): Promise<void> {
    let query = this.tables.reader
      .selectFrom('orchestration_task_attachments as ta')
      .innerJoin('orchestration_tasks as t', 't.id', 'ta.task_id')
      .selectAll('ta')
      .select('t.session_id as session')
      .where('t.session_id', 'is not', null);
    if (tasks) query = query.where('ta.task_id', 'in', tasks);
    const rows = await query.execute();
    const due = await this.kernel.unheldRooms(
      rows.map((r) => ({ session: r.session as string, stream: r.stream_id })),
    );
    const wanted = new Set(due.map((d) => `${d.session}\n${d.stream}`));
    for (const row of rows) {
      if (this.stopped) return;
      if (!wanted.has(`${row.session}\n${row.stream_id}`)) continue;
      try {
        await this.apply(row, row.session as string);
      } catch (error) {
        this.log.error({ err: error }, `durable attachment of ${row.task_id}`);
      }
    }
  }
}
