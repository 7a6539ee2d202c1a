import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/**
 * WAL checkpoints off the event loop. better-sqlite3 is synchronous, and SQLite runs an
 * automatic checkpoint (copy the WAL into the database, fsync) inside whichever commit
 * pushes the WAL past its threshold: a 3–7 ms stall on the event loop every ~130 commits.
 * The writer connection turns automatic checkpoints off; this worker thread, with a
 * connection of its own, runs PASSIVE checkpoints on a short interval. PASSIVE never takes
 * the write lock nor waits for readers, so it cannot make a commit wait or fail.
 * (FULL/RESTART would: they hold the write lock while waiting for readers, and the writer's
 * `begin immediate` would wait for it on the event loop.)
 *
 * The WAL only starts over from its beginning at a write that finds every frame already
 * copied. Under writes that never pause, each checkpoint finishes with newer frames behind
 * it, so that moment never comes and the WAL grows without bound (measured: 1.8 GiB in 6 s
 * of back-to-back appends; every page read then searches an ever longer WAL index). So once
 * a checkpoint reports the WAL past `restartFrames`, the writer asks for a catch-up before
 * its next batch (`behind`, `catchUp`): it waits, off the event loop, while the worker
 * copies the few frames still behind, and that batch's commit restarts the WAL;
 * `journal_size_limit` then cuts the file back. The store's close runs one TRUNCATE.
 *
 * The worker's code is inline (an eval worker loading better-sqlite3 by resolved path) so
 * it runs the same from TypeScript sources and from a compiled build.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.path);
db.pragma('busy_timeout = 0');
const passive = () => {
  try {
    return db.pragma('wal_checkpoint(PASSIVE)')[0];
  } catch (e) {
    // SQLITE_BUSY and friends: the next round tries again.
    return undefined;
  }
};
// Shared with the writer's thread: 1 while it should let the WAL start over. Read there
// without a message, which a busy event loop would take in only later.
const flag = new Int32Array(workerData.flag);
// Raised once per restartFrames of growth: from 0 after the WAL started over, or from where
// the last catch-up left it when a reader kept it from starting over.
let from = 0;
const timer = setInterval(() => {
  const r = passive();
  if (r === undefined) return;
  if (r.log < from) from = 0;
  if (r.log >= from + workerData.restartFrames) Atomics.store(flag, 0, 1);
}, workerData.intervalMs);
// The writer is paused: copy what is left, a few rounds at most (a reader may hold frames back).
const catchUp = (attempt) => {
  const r = passive();
  if ((r === undefined || r.checkpointed < r.log) && attempt < 20) return setTimeout(() => catchUp(attempt + 1), 2);
  from = r === undefined ? 0 : r.log;
  Atomics.store(flag, 0, 0);
  parentPort.postMessage('caughtUp');
};
parentPort.on('message', (m) => {
  if (m === 'catchUp') return catchUp(0);
  if (m !== 'close') return;
  clearInterval(timer);
  try { db.close(); } catch {}
  parentPort.close();
});
`;

export interface CheckpointerOptions {
  /** Between PASSIVE checkpoints. */
  intervalMs?: number;
  /** WAL frames (pages) past which the writer pauses once for the WAL to start over. */
  restartFrames?: number;
}

/** 64 MiB of 4 KiB pages: the writer's `journal_size_limit`. */
export const DEFAULT_RESTART_FRAMES = 16_384;

/** The longest a catch-up holds the writer: a disk slow to sync must not stall writes for long. */
const CATCH_UP_MAX_MS = 1000;

export class Checkpointer {
  private readonly worker: Worker;
  private readonly exited: Promise<void>;
  /** Set by the worker (see WORKER_SOURCE). */
  private readonly flag = new Int32Array(new SharedArrayBuffer(4));
  private waiting: Array<() => void> = [];
  private giveUp: NodeJS.Timeout | undefined;
  /** A catch-up asked for and not yet answered (the writer may have stopped waiting for it). */
  private asked = false;
  private closed = false;

  constructor(path: string, opts: CheckpointerOptions = {}) {
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    this.worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: {
        path,
        driver,
        intervalMs: opts.intervalMs ?? 20,
        restartFrames: opts.restartFrames ?? DEFAULT_RESTART_FRAMES,
        flag: this.flag.buffer,
      },
      // The eval'd source is plain CommonJS: no TypeScript loader needed in the worker.
      execArgv: [],
    });
    this.worker.on('message', (m: unknown) => {
      if (m !== 'caughtUp') return;
      this.asked = false;
      this.release();
    });
    this.exited = new Promise((resolve) =>
      this.worker.once('exit', () => {
        // A worker that is gone answers nobody: let a waiting writer go on.
        this.closed = true;
        this.release();
        resolve();
      }),
    );
    // A crashed worker must not crash the server: commits still work, the WAL just grows
    // until the writer's close-time checkpoint.
    this.worker.on('error', (error) => console.error('warren: checkpoint worker failed:', error.message));
    // Never what keeps a process alive; close() still ends it.
    this.worker.unref();
  }

  /** True when the WAL has grown past its bound and the writer should let it start over. */
  get behind(): boolean {
    return !this.closed && !this.asked && Atomics.load(this.flag, 0) === 1;
  }

  /**
   * Resolves once the worker has copied every frame it can (the caller writes nothing
   * meanwhile), so the next commit starts the WAL over. Bounded: the worker gives up after
   * ~20 short rounds when a reader holds frames back, and the writer after CATCH_UP_MAX_MS;
   * it is not asked again until it has answered.
   */
  catchUp(): Promise<void> {
    if (this.closed) return Promise.resolve();
    return new Promise((resolve) => {
      this.waiting.push(resolve);
      if (this.waiting.length === 1) this.giveUp = setTimeout(() => this.release(), CATCH_UP_MAX_MS);
      if (this.asked) return;
      this.asked = true;
      // Awaited, so it must keep the process alive until it answers (or the writer gives up).
      this.worker.ref();
      this.worker.postMessage('catchUp');
    });
  }

  /** Stop the worker and wait for it to close its connection. */
  async close(): Promise<void> {
    // Unreferenced, its exit would not keep the loop alive for this await.
    this.worker.ref();
    this.worker.postMessage('close');
    await this.exited;
  }

  private release(): void {
    clearTimeout(this.giveUp);
    if (!this.closed) this.worker.unref();
    for (const r of this.waiting.splice(0)) r();
  }
}
