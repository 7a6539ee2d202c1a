import { bootId } from '../runtimes/process.ts';
import type { AgentExit, AgentSink } from '../runtimes/types.ts';
import type { SessionsTable } from '../store/schema.ts';
import type { WriteTx } from '../store/writer.ts';
import { redactCredentials } from '../util/redact.ts';
import { endAfterTerm } from './budget.ts';
import type { Core } from './core.ts';
import type { Delivery } from './delivery.ts';
import { endSession } from './lifecycle.ts';
import { lockedSessionIn } from './lookup.ts';
import { holdsLease } from './ownership.ts';
import { setStatus } from './status.ts';
import { recordUsage } from './usage.ts';

/**
 * One report, applied to the session's row as it stands. It may return the row as it left it
 * (when it knows it exactly): the session's next report in the same write then skips reading it.
 */
// biome-ignore lint/suspicious/noConfusingVoidType: most reports return nothing (void), and that means "read it again"
type Report = (tx: WriteTx, row: SessionsTable) => Promise<SessionsTable | undefined | void>;

interface Queued {
  fn: Report;
  /** False for a report that only appends: no need to read the row first. */
  needsRow: boolean;
  resolve: () => void;
  reject: (e: unknown) => void;
}

/**
 * Agents' reports become log events in the order each agent made them. Reports group-commit
 * like the writer's units, one level up: every report queued while the previous batch was
 * being written goes into the next one, and that batch is ONE write unit (no savepoint per
 * report), each session's reports applied in order, each to its row as read right then (a
 * report of one session may change another's: an exit reaps children). So a turn's busy + input, or output + idle, and the turns
 * of many agents, cost one unit. If a batch fails, its sessions are written again one unit
 * each, and a failing session's reports one unit each: one bad report fails alone.
 */
export class ReportQueue {
  private queued = new Map<string, Queued[]>();
  private running = false;
  private idle: Array<() => void> = [];
  private closed = false;

  /**
   * Alone, nobody else writes a session's row between its reports in one batch. With several
   * nodes another node may (a takeover), so each report reads the row afresh.
   */
  private get reuseRows(): boolean {
    return !this.core.node.clustered;
  }

  constructor(private readonly core: Core) {}

  /**
   * Queue a write about one session behind its earlier ones. After the kernel has stopped, a
   * late report (a process that exits during shutdown) is dropped: the next start finds the
   * session as it was and deals with it.
   */
  apply(sessionId: string, fn: Report, opts: { needsRow?: boolean } = {}): Promise<void> {
    if (this.closed) return Promise.resolve();
    const done = new Promise<void>((resolve, reject) => {
      const item = { fn, needsRow: opts.needsRow ?? true, resolve, reject };
      const q = this.queued.get(sessionId);
      if (q) q.push(item);
      else this.queued.set(sessionId, [item]);
      if (!this.running) {
        this.running = true;
        void this.loop();
      }
    });
    // Logged here; a caller that does not wait for the report (void) leaves nothing unhandled.
    done.catch((error) => {
      this.core.log.error({ session: sessionId, err: error }, `recording a report of ${sessionId} failed`);
    });
    return done;
  }

  /** Record what is queued, then take no more. */
  async close(): Promise<void> {
    await this.drained();
    this.closed = true;
  }

  /** Resolves when every queued report has been recorded (or failed). */
  drained(): Promise<void> {
    if (!this.running) return Promise.resolve();
    return new Promise((r) => this.idle.push(r));
  }

  private async loop(): Promise<void> {
    // Let reports made in the same tick (busy, then input) join the first batch.
    await Promise.resolve();
    while (this.queued.size > 0) {
      const batch = this.queued;
      this.queued = new Map();
      await this.writeBatch(batch);
    }
    // In the same step as the check above: a report queued after it starts a new loop.
    this.running = false;
    for (const r of this.idle.splice(0)) r();
  }

  private async writeBatch(batch: Map<string, Queued[]>): Promise<void> {
    try {
      await this.core.store.writer.write(async (tx) => {
        for (const [id, items] of batch) await applyAll(tx, id, items, this.reuseRows);
      });
      for (const items of batch.values()) for (const r of items) r.resolve();
    } catch (error) {
      const only = batch.size === 1 ? [...batch.values()][0] : undefined;
      if (only?.length === 1) {
        only[0]?.reject(error);
        return;
      }
      await Promise.all([...batch].map(([id, items]) => this.writeSession(id, items)));
    }
  }

  /** After a failed batch: one session's reports in one unit, or, if that fails too, one unit each. */
  private async writeSession(id: string, items: Queued[]): Promise<void> {
    try {
      await this.core.store.writer.write((tx) => applyAll(tx, id, items, this.reuseRows));
      for (const r of items) r.resolve();
    } catch (error) {
      if (items.length === 1) {
        items[0]?.reject(error);
        return;
      }
      for (const r of items) {
        await this.core.store.writer.write((tx) => applyAll(tx, id, [r], false)).then(r.resolve, r.reject);
      }
    }
  }
}

/**
 * A session's reports in order, each on its row as the previous one left it: read again
 * unless the previous report returned it. Nothing else runs between one session's reports in
 * a batch, so a returned row is what the table holds.
 */
async function applyAll(tx: WriteTx, id: string, items: Queued[], reuseRows: boolean): Promise<void> {
  let row: SessionsTable | undefined;
  let known = false;
  for (const r of items) {
    if (!r.needsRow) {
      // Appends only: the row (if read) stays as it is.
      await r.fn(tx, row as SessionsTable);
      continue;
    }
    if (!known) row = await lockedSessionIn(tx, id);
    if (!row) continue;
    const next = await r.fn(tx, row);
    known = reuseRows && next !== undefined;
    if (next) row = next;
  }
}

export interface SinkHooks {
  /** The agent's process is gone: forget its handle. */
  forget(sessionId: string): void;
  /** A SIGTERMed session went idle: ask its agent to end. */
  finish(sessionId: string): void;
  /** The session is another node's now: end this node's agent for it, record nothing. */
  fenced(sessionId: string): void;
  /** This kernel run, recorded with every agent process it starts. */
  runId: string;
}

/** An agent's line of output is its session's last message (one per line: a prepared statement). */
const OUTPUT_SQL = 'update sessions set last_message = ?, updated_at = ? where id = ?';

/** The sink a runtime reports into, for one session. */
export function agentSink(
  core: Core,
  reports: ReportQueue,
  delivery: Delivery,
  hooks: SinkHooks,
  row: SessionsTable,
  /**
   * Resumed where its parent last heard of it (idle): until it runs a turn or says something,
   * an idle it reports changes nothing, and wakes nobody (a restart costs no parent a turn).
   */
  unchanged = false,
): AgentSink {
  const id = row.id;
  const zone = row.zone;
  let asBefore = unchanged;
  // A report of the current turn was refused (the database was unreachable): the turn's
  // input is then not acknowledged at its idle, so it is handed again to the session's next
  // agent, rather than counted as answered by an answer that was never recorded.
  let turnLost = false;
  // A report of this agent found the session another node's (or this node's under an earlier
  // epoch): it recorded nothing, yet resolved, and this agent is being ended. Nothing it took
  // is acknowledged from then on, even by an idle recorded after this node owns the session
  // again: its answers were dropped, so its input goes to the session's next agent.
  let fenced = false;
  const fence = () => {
    fenced = true;
    hooks.fenced(id);
  };
  const noting = (p: Promise<void>): Promise<void> => {
    p.catch(() => {
      turnLost = true;
    });
    return p;
  };
  // Fencing (ownership.ts): once another node owns the session, this node's agent for it
  // writes nothing more (its exit included) and is ended here.
  const apply = (fn: Report) =>
    noting(
      reports.apply(id, async (tx, r) => {
        if (holdsLease(core.node, r)) return fn(tx, r);
        fence();
      }),
    );
  const setActivity = async (tx: WriteTx, r: SessionsTable, text: string | null): Promise<SessionsTable> => {
    if ((r.activity ?? null) === text) return r;
    await tx.db.updateTable('sessions').set({ activity: text }).where('id', '=', id).execute();
    tx.append({ zone, type: 'session.activity', actor: id, session_id: id, payload: { text } });
    return { ...r, activity: text };
  };
  return {
    output: (text) => {
      asBefore = false;
      return apply(async (tx, r) => {
        await tx.run(OUTPUT_SQL, [text, tx.now, id]);
        tx.append({ zone, type: 'session.output', actor: id, session_id: id, payload: { text } });
        return setActivity(tx, { ...r, last_message: text, updated_at: tx.now }, null);
      });
    },
    event: (type, given) => {
      // The input a turn took names the messages it was handed (input-record.ts): decided now,
      // while the delivery that handed them still knows them.
      const payload = type === 'input' ? delivery.inputRecord(id, given) : given;
      return noting(
        reports.apply(
          id,
          async (tx, r) => {
            // Alone, no row is read for it; in a cluster the row says whether this node still owns it.
            if (core.node.clustered && !holdsLease(core.node, r)) return fence();
            tx.append({
              zone,
              type: `session.${type}`,
              actor: id,
              session_id: id,
              // Tool calls carry whatever an agent typed, credentials included: redacted here, once.
              payload: redactCredentials(payload),
            });
          },
          { needsRow: core.node.clustered },
        ),
      );
    },
    usage: (u) =>
      apply(async (tx, r) => {
        tx.append({ zone, type: 'session.usage', actor: id, session_id: id, payload: { ...u } });
        await recordUsage(tx, core, r, u);
      }),
    busy: () => {
      asBefore = false;
      return apply(async (tx, r) => {
        if (r.status === 'idle' || r.status === 'pending')
          return setStatus(tx, core, r, 'running', { actor: id });
        return r;
      });
    },
    idle: () => {
      const consumed = delivery.turnEnding(id);
      const quiet = asBefore && consumed.size === 0;
      asBefore = false;
      let termPending = false;
      const recorded = apply(async (tx, r) => {
        termPending = r.term_deadline !== null && r.status !== 'stopped';
        const next = await setActivity(tx, r, null);
        if (r.status === 'running' || r.status === 'pending')
          return setStatus(tx, core, next, 'idle', { actor: id, quiet });
        return next;
      });
      // Runtimes report idle last, once ready for input: what waited is handed over now, and
      // the next turn's busy and input are recorded in the same write as this idle.
      delivery.safePoint(id);
      return recorded.then(
        () => {
          // Reports are applied in order: the turn's earlier ones have settled by now.
          const lost = turnLost || fenced;
          turnLost = false;
          delivery.turnRecorded(id, lost ? new Map() : consumed);
          // It took the SIGTERM and ended its turn: that is the graceful stop it was asked for.
          if (termPending) hooks.finish(id);
        },
        // Logged by the queue. Runtimes do not wait for a report (void): a rejection left here
        // would be unhandled and end the server. What it handed over stays unacknowledged (and
        // this turn's loss is not the next one's).
        () => {
          turnLost = false;
        },
      );
    },
    ready: () => delivery.safePoint(id),
    activity: (text) => apply((tx, r) => setActivity(tx, r, text)),
    saveState: (state) =>
      apply(async (tx) => {
        await tx.db
          .updateTable('sessions')
          .set({ runtime_state: JSON.stringify(state) })
          .where('id', '=', id)
          .execute();
      }),
    spawned: (proc) =>
      void apply(async (tx) => {
        await tx.db
          .insertInto('agent_procs')
          .values({
            session_id: id,
            pid: proc.pid,
            pgid: proc.pgid,
            start_time: proc.startTime,
            boot_id: bootId(),
            run_id: hooks.runId,
            started_at: tx.now,
          })
          .execute();
      }),
    exited: (pid) =>
      void apply(async (tx) => {
        await tx.db.deleteFrom('agent_procs').where('session_id', '=', id).where('pid', '=', pid).execute();
      }),
    exit: (result: AgentExit) => {
      hooks.forget(id);
      void apply((tx, r) => recordExit(tx, core, r, result));
    },
  };
}

/** Signals that end a process from outside (kill, a closed terminal, an OOM kill); a fault such as SIGSEGV is a crash. */
const LOST_BY: ReadonlySet<string> = new Set([
  'SIGKILL',
  'SIGTERM',
  'SIGHUP',
  'SIGINT',
  'SIGQUIT',
  'SIGPIPE',
]);

/**
 * The agent's process ended. On its own: completed (terminated, if it had been asked to
 * stop) or crashed. Killed by a signal warren did not send: lost, so suspended, not crashed.
 */
async function recordExit(tx: WriteTx, core: Core, r: SessionsTable, result: AgentExit): Promise<void> {
  await tx.db.deleteFrom('agent_procs').where('session_id', '=', r.id).execute();
  if (r.status === 'stopped') return;
  if (r.status === 'suspended') return; // disposed on purpose (SIGSTOP, lost transport)
  if (result.reason === 'lost') {
    await setStatus(tx, core, r, 'suspended', { reason: result.error ?? 'transport lost' });
    return;
  }
  if (result.reason === 'crashed' && result.signal && LOST_BY.has(result.signal)) {
    await setStatus(tx, core, r, 'suspended', {
      reason: `agent process ended by ${result.signal} from outside warren`,
    });
    return;
  }
  // Stopped after SIGTERM: terminated, or, if that SIGTERM was a budget's, budget_exceeded.
  const asked = result.reason === 'completed' && r.term_deadline !== null ? endAfterTerm(r) : null;
  const reason = asked ? asked.reason : result.reason;
  const detail: Record<string, unknown> = {};
  if (result.error) detail.error = result.error;
  if (result.code !== undefined) detail.code = result.code;
  if (result.stderrTail) detail.stderrTail = result.stderrTail;
  if (asked) Object.assign(detail, asked.detail);
  await endSession(tx, core, r.id, reason, r.id, detail);
}
