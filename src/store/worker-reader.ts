import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import {
  type CompiledQuery,
  type DatabaseConnection,
  type Driver,
  type QueryResult,
  SqliteDialect,
} from 'kysely';
import { LOWER_OWN_PRIORITY } from '../util/thread-priority.ts';

/**
 * The worker: its own connection to the database file, read-only (`query_only`), a query at
 * a time. Inline (an eval worker loading better-sqlite3 by resolved path, as the checkpoint
 * worker does) so it runs the same from TypeScript sources and from the bundled build. The
 * reads it runs are callers' searches: its thread runs at a lower priority than the
 * server's (thread-priority.ts).
 */
const WORKER_SOURCE = `${LOWER_OWN_PRIORITY}
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.path, { fileMustExist: true });
db.pragma('busy_timeout = 5000');
db.pragma('query_only = 1');
parentPort.postMessage('ready');
const statements = new Map();
parentPort.on('message', ({ id, sql, parameters }) => {
  try {
    let stmt = statements.get(sql);
    if (!stmt) {
      stmt = db.prepare(sql);
      if (statements.size >= 256) statements.delete(statements.keys().next().value);
      statements.set(sql, stmt);
    }
    if (!stmt.reader) throw new Error('this connection only reads');
    parentPort.postMessage({ id, rows: stmt.all(parameters) });
  } catch (e) {
    parentPort.postMessage({ id, error: String((e && e.message) || e) });
  }
});
`;

/** A read stopped because it ran past the reader's time bound. */
export class ReadTimeoutError extends Error {
  readonly code = 'read_timeout';
  constructor(readonly ms: number) {
    super(`the read ran past ${ms} ms and was stopped`);
    this.name = 'ReadTimeoutError';
  }
}

interface Job {
  sql: string;
  parameters: readonly unknown[];
  resolve: (rows: unknown[]) => void;
  reject: (error: Error) => void;
}

/**
 * SQLite reads off the event loop. better-sqlite3 answers synchronously, so a long read (a
 * 25-word full-text search over 3,000 findings: 0.24–0.85 s) held the server for all of it.
 * Reads sent here run in a worker thread with a connection of its own (WAL: it reads what
 * was committed, beside the writer), one at a time in the order sent; the server's thread
 * only waits. A read past `maxMs` ends the worker (the next read starts another) and fails
 * with ReadTimeoutError at once; the ended thread still finishes the SQLite call it is in
 * (better-sqlite3 has no interrupt; termination waits for JavaScript), at its low priority.
 * Started by the first read, keeps no process alive while idle, and ended by `close` (the
 * store's close).
 */
export class WorkerReads {
  private worker: Worker | undefined;
  /** It has opened its connection: reads are sent (and timed) from then on. */
  private ready = false;
  private readonly queue: Job[] = [];
  private running: { id: number; job: Job; timer: NodeJS.Timeout } | undefined;
  private nextId = 0;
  private closed = false;

  constructor(
    private readonly path: string,
    private readonly maxMs: number,
  ) {}

  all(sql: string, parameters: readonly unknown[]): Promise<unknown[]> {
    if (this.closed) return Promise.reject(new Error('store is closed'));
    return new Promise((resolve, reject) => {
      this.queue.push({ sql, parameters, resolve, reject });
      this.pump();
    });
  }

  async close(): Promise<void> {
    this.closed = true;
    const worker = this.worker;
    this.worker = undefined;
    const failed = [...(this.running ? [this.running.job] : []), ...this.queue.splice(0)];
    if (this.running) clearTimeout(this.running.timer);
    this.running = undefined;
    for (const job of failed) job.reject(new Error('store is closed'));
    await worker?.terminate();
  }

  private pump(): void {
    if (this.running || this.closed) return;
    if (this.queue.length === 0) {
      this.worker?.unref();
      return;
    }
    const worker = this.started();
    worker.ref();
    if (!this.ready) return; // pumped again once it is
    const job = this.queue.shift()!;
    const id = this.nextId++;
    const timer = setTimeout(() => this.overran(id), this.maxMs);
    this.running = { id, job, timer };
    worker.postMessage({ id, sql: job.sql, parameters: job.parameters });
  }

  private started(): Worker {
    if (this.worker) return this.worker;
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: { path: this.path, driver },
      execArgv: [],
    });
    this.ready = false;
    worker.on('message', (m: 'ready' | { id: number; rows?: unknown[]; error?: string }) => {
      if (m !== 'ready')
        return this.settle(
          m.id,
          m.error === undefined ? { rows: m.rows ?? [] } : { error: new Error(m.error) },
        );
      this.ready = true;
      this.pump();
    });
    worker.on('error', (error) => this.lost(worker, error));
    worker.on('exit', () => this.lost(worker, new Error('the read worker exited')));
    this.worker = worker;
    return worker;
  }

  private settle(id: number, outcome: { rows: unknown[] } | { error: Error }): void {
    if (this.running?.id !== id) return;
    clearTimeout(this.running.timer);
    const { job } = this.running;
    this.running = undefined;
    if ('rows' in outcome) job.resolve(outcome.rows);
    else job.reject(outcome.error);
    this.pump();
  }

  private overran(id: number): void {
    if (this.running?.id !== id || !this.worker) return;
    const worker = this.worker;
    this.worker = undefined;
    void worker.terminate();
    this.settle(id, { error: new ReadTimeoutError(this.maxMs) });
  }

  /** It failed or exited: the read in hand fails; one that was waiting for it to open fails too. */
  private lost(worker: Worker, error: Error): void {
    if (this.worker !== worker) return;
    this.worker = undefined;
    if (this.running) this.settle(this.running.id, { error });
    else if (!this.ready) this.queue.shift()?.reject(error);
    this.pump();
  }
}

/** Kysely over WorkerReads: the SQLite dialect's compiler and adapter, reads only. */
export class WorkerReadDialect extends SqliteDialect {
  constructor(private readonly reads: WorkerReads) {
    super({ database: {} as never });
  }

  override createDriver(): Driver {
    const reads = this.reads;
    const connection: DatabaseConnection = {
      async executeQuery<R>(q: CompiledQuery): Promise<QueryResult<R>> {
        return { rows: (await reads.all(q.sql, q.parameters)) as R[] };
      },
      // biome-ignore lint/correctness/useYield: refused before anything is read
      async *streamQuery() {
        throw new Error('the worker reader does not stream');
      },
    };
    const refuse = async () => {
      throw new Error('the worker reader only reads: no transactions');
    };
    return {
      init: async () => {},
      acquireConnection: async () => connection,
      beginTransaction: refuse,
      commitTransaction: refuse,
      rollbackTransaction: refuse,
      releaseConnection: async () => {},
      destroy: () => reads.close(),
    };
  }
}
