/**
 * A real `warren serve` and the real CLI against it, for the orchestration tests that
 * drive the inbox and task-keyed rooms as an operator would.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { binEnv, type ServerProcess, startServer, WARREN_BIN } from '../helpers/server.ts';

export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

// The CLI must not pick up a developer's own settings.
const cleanEnv = Object.fromEntries(
  Object.entries(process.env).filter(([k]) => !k.startsWith('WARREN_') && k !== 'COLUMNS'),
);

export interface LiveServer {
  server: ServerProcess;
  dataDir: string;
  /** `warren <args>` against the server. */
  cli(...args: string[]): Promise<Run>;
  /** `warren <args>`, which must exit 0; its stdout. */
  ok(...args: string[]): Promise<string>;
  /** Insert a task row straight into the server's SQLite file (no task commands needed). */
  insertTask(row: { id: string; title: string; session_id: string | null; status: string }): void;
  stop(): Promise<void>;
}

/** A server on a fresh data dir; `db` puts its store elsewhere (a PostgreSQL schema). */
export async function liveServer(opts: { db?: string } = {}): Promise<LiveServer> {
  const dataDir = mkdtempSync(join(tmpdir(), 'warren-orch-'));
  const server = await startServer({ dataDir, ...(opts.db ? { db: opts.db } : {}) });
  const cli = (...args: string[]) =>
    new Promise<Run>((resolve, reject) => {
      execFile(
        process.execPath,
        [WARREN_BIN, ...args, '--url', server.url, '--data-dir', dataDir],
        { env: { ...cleanEnv, ...binEnv(), COLUMNS: '400' }, timeout: 20_000 },
        (error, stdout, stderr) => {
          if (error && typeof error.code !== 'number') return reject(error);
          resolve({ code: typeof error?.code === 'number' ? error.code : 0, stdout, stderr });
        },
      );
    });
  return {
    server,
    dataDir,
    cli,
    async ok(...args) {
      const r = await cli(...args);
      const c = server.child;
      const state =
        c.exitCode !== null || c.signalCode !== null ? `exited (${c.exitCode ?? c.signalCode})` : 'running';
      assert.equal(
        r.code,
        0,
        `warren ${args.join(' ')} exited ${r.code}:\n${r.stderr}${r.stdout}\nthe server is ${state}; its output:\n${server.output().slice(-3000)}`,
      );
      return r.stdout;
    },
    insertTask(row) {
      const db = new Database(join(dataDir, 'warren.db'));
      try {
        db.pragma('busy_timeout = 5000');
        const now = Date.now();
        db.prepare(
          `insert into orchestration_tasks (id, zone, title, prompt, status, session_id, created_by, created_at, updated_at)
           values (?, 'default', ?, 'do it', ?, ?, 'operator:test', ?, ?)`,
        ).run(row.id, row.title, row.status, row.session_id, now, now);
      } finally {
        db.close();
      }
    },
    async stop() {
      await server.stop();
      rmSync(dataDir, { recursive: true, force: true });
    },
  };
}
