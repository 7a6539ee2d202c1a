import type { AgentExit, AgentSink } from '../runtimes/types.ts';
import type { SessionsTable } from '../store/schema.ts';
import type { WriteTx } from '../store/writer.ts';
import { parseJson } from '../util/json.ts';
import type { Core } from './core.ts';
import type { Delivery } from './delivery.ts';
import { endSession } from './lifecycle.ts';
import { sessionById } from './lookup.ts';
import { setStatus } from './status.ts';

type Report = (tx: WriteTx, row: SessionsTable) => Promise<void>;

interface Queued {
  fn: Report;
  resolve: () => void;
  reject: (e: unknown) => void;
}

/**
 * An agent's reports become log events one at a time, in the order the agent made them.
 * Reports that queue up while an earlier one is being written share the next write unit
 * (busy + input, output + idle: one commit where there were several), each applied to the
 * session's row as the previous one left it. If a shared unit fails, its reports are
 * written again one per unit, so one bad report fails alone, as when each had its own.
 */
export class ReportQueue {
  private queues = new Map<string, Queued[]>();
  private draining = new Map<string, Promise<void>>();

  constructor(private readonly core: Core) {}

  /** Queue a write about one session behind its earlier ones. */
  apply(sessionId: string, fn: Report): Promise<void> {
    const done = new Promise<void>((resolve, reject) => {
      const q = this.queues.get(sessionId);
      if (q) q.push({ fn, resolve, reject });
      else this.queues.set(sessionId, [{ fn, resolve, reject }]);
      if (!this.draining.has(sessionId)) {
        this.draining.set(sessionId, this.drain(sessionId));
      }
    });
    // Logged here; a caller that does not wait for the report (void) leaves nothing unhandled.
    done.catch((error) => {
      console.error(`warren: recording a report of ${sessionId} failed:`, (error as Error).message);
    });
    return done;
  }

  /** Resolves when every queued report has been recorded (or failed). */
  async drained(): Promise<void> {
    while (this.draining.size > 0) await Promise.all([...this.draining.values()]);
  }

  private async drain(sessionId: string): Promise<void> {
    // Let reports made in the same tick (busy, then input) join the first unit.
    await Promise.resolve();
    for (;;) {
      const batch = this.queues.get(sessionId);
      this.queues.delete(sessionId);
      if (!batch || batch.length === 0) {
        // In the same step as the check: a report queued after it starts a new drain.
        this.draining.delete(sessionId);
        return;
      }
      try {
        await this.write(sessionId, batch);
        for (const r of batch) r.resolve();
      } catch (error) {
        if (batch.length === 1) batch[0]?.reject(error);
        else
          for (const r of batch) {
            await this.write(sessionId, [r]).then(r.resolve, r.reject);
          }
      }
    }
  }

  private write(sessionId: string, batch: Queued[]): Promise<void> {
    return this.core.store.writer.write(async (tx) => {
      for (const r of batch) {
        const row = await sessionById(tx.db, sessionId);
        if (row) await r.fn(tx, row);
      }
    });
  }
}

export interface SinkHooks {
  /** The agent's process is gone: forget its handle. */
  forget(sessionId: string): void;
  /** A SIGTERMed session went idle: ask its agent to end. */
  finish(sessionId: string): void;
  /** This kernel run, recorded with every agent process it starts. */
  runId: string;
}

/** The sink a runtime reports into, for one session. */
export function agentSink(
  core: Core,
  reports: ReportQueue,
  delivery: Delivery,
  hooks: SinkHooks,
  row: SessionsTable,
): AgentSink {
  const id = row.id;
  const zone = row.zone;
  const apply = (fn: (tx: WriteTx, r: SessionsTable) => Promise<void>) => reports.apply(id, fn);
  const setActivity = async (tx: WriteTx, r: SessionsTable, text: string | null) => {
    if ((r.activity ?? null) === text) return;
    await tx.db.updateTable('sessions').set({ activity: text }).where('id', '=', id).execute();
    tx.append({ zone, type: 'session.activity', actor: id, session_id: id, payload: { text } });
  };
  return {
    output: (text) =>
      apply(async (tx, r) => {
        await tx.db
          .updateTable('sessions')
          .set({ last_message: text, updated_at: tx.now })
          .where('id', '=', id)
          .execute();
        tx.append({ zone, type: 'session.output', actor: id, session_id: id, payload: { text } });
        await setActivity(tx, r, null);
      }),
    event: (type, payload) =>
      apply(async (tx) => {
        tx.append({ zone, type: `session.${type}`, actor: id, session_id: id, payload });
      }),
    usage: (u) =>
      apply(async (tx, r) => {
        const sum: Record<string, number> = { ...parseJson<Record<string, number>>(r.usage, {}) };
        for (const [k, v] of Object.entries(u)) if (typeof v === 'number') sum[k] = (sum[k] ?? 0) + v;
        await tx.db
          .updateTable('sessions')
          .set({ usage: JSON.stringify(sum) })
          .where('id', '=', id)
          .execute();
        tx.append({ zone, type: 'session.usage', actor: id, session_id: id, payload: { ...u } });
      }),
    busy: () =>
      apply(async (tx, r) => {
        if (r.status === 'idle' || r.status === 'pending')
          await setStatus(tx, core, r, 'running', { actor: id });
      }),
    idle: () => {
      const consumed = delivery.turnEnding(id);
      let termPending = false;
      return apply(async (tx, r) => {
        await setActivity(tx, r, null);
        if (r.status === 'running' || r.status === 'pending')
          await setStatus(tx, core, r, 'idle', { actor: id });
        termPending = r.term_deadline !== null && r.status !== 'stopped';
      }).then(() => {
        delivery.turnRecorded(id, consumed);
        // It took the SIGTERM and ended its turn: that is the graceful stop it was asked for.
        if (termPending) hooks.finish(id);
      });
    },
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
            boot_id: null,
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
  if (result.reason === 'crashed' && result.signal && LOST_BY.has(result.signal)) {
    await setStatus(tx, core, r, 'suspended', {
      reason: `agent process ended by ${result.signal} from outside warren`,
    });
    return;
  }
  const reason = result.reason === 'completed' && r.term_deadline !== null ? 'terminated' : result.reason;
  const detail: Record<string, unknown> = {};
  if (result.error) detail.error = result.error;
  if (result.code !== undefined) detail.code = result.code;
  if (result.stderrTail) detail.stderrTail = result.stderrTail;
  await endSession(tx, core, r.id, reason, r.id, detail);
}
