import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';

/**
 * WAL checkpoints off the event loop. better-sqlite3 is synchronous, and SQLite runs an
 * automatic checkpoint (copy the WAL into the database, fsync) inside whichever commit
 * pushes the WAL past its threshold: a 3–7 ms stall on the event loop every ~130 commits.
 * The writer connection turns automatic checkpoints off; this worker thread, with a
 * connection of its own, runs PASSIVE checkpoints on a short interval. PASSIVE never takes
 * the write lock nor waits for readers, so it cannot make a commit wait or fail.
 * (FULL/RESTART would: they hold the write lock while waiting for readers, and a writer
 * whose deferred transaction read first then gets SQLITE_BUSY instead of waiting.)
 * The WAL stays bounded without them: once a checkpoint has copied every frame, the next
 * commit starts the WAL over from its beginning, and the writer's `journal_size_limit`
 * cuts the file back; the store's close runs one TRUNCATE.
 *
 * The worker's code is inline (an eval worker loading better-sqlite3 by resolved path) so
 * it runs the same from TypeScript sources and from a compiled build.
 */
const WORKER_SOURCE = `
const { parentPort, workerData } = require('node:worker_threads');
const Database = require(workerData.driver);
const db = new Database(workerData.path);
db.pragma('busy_timeout = 0');
const timer = setInterval(() => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch (e) {
    // SQLITE_BUSY and friends: the next round tries again.
  }
}, workerData.intervalMs);
parentPort.on('message', (m) => {
  if (m !== 'close') return;
  clearInterval(timer);
  try { db.close(); } catch {}
  parentPort.close();
});
`;

export interface CheckpointerOptions {
  /** Between PASSIVE checkpoints. */
  intervalMs?: number;
}

export class Checkpointer {
  private readonly worker: Worker;
  private readonly exited: Promise<void>;

  constructor(path: string, opts: CheckpointerOptions = {}) {
    const driver = createRequire(import.meta.url).resolve('better-sqlite3');
    this.worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: {
        path,
        driver,
        intervalMs: opts.intervalMs ?? 20,
      },
      // The eval'd source is plain CommonJS: no TypeScript loader needed in the worker.
      execArgv: [],
    });
    this.exited = new Promise((resolve) => this.worker.once('exit', () => resolve()));
    // A crashed worker must not crash the server: commits still work, the WAL just grows
    // until the writer's close-time checkpoint.
    this.worker.on('error', (error) => console.error('warren: checkpoint worker failed:', error.message));
    // Never what keeps a process alive; close() still ends it.
    this.worker.unref();
  }

  /** Stop the worker and wait for it to close its connection. */
  async close(): Promise<void> {
    // Unreferenced, its exit would not keep the loop alive for this await.
    this.worker.ref();
    this.worker.postMessage('close');
    await this.exited;
  }
}
