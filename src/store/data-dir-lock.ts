import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import Database from 'better-sqlite3';
import { ensurePrivateFile, FILE_MODE, securePrivateDir } from './file-modes.ts';

/**
 * One server per data dir. The lock is SQLite's own exclusive lock on `<dataDir>/serve.lock`,
 * taken with `BEGIN EXCLUSIVE` and held by a transaction that never ends: a POSIX record lock
 * (`fcntl`) that the operating system holds for this process and drops the moment it dies,
 * by any means (SIGKILL too). It is not inherited by children (an agent that outlives the
 * server holds nothing), a reused pid cannot fake it, and it needs no native code beyond the
 * SQLite warren already loads. Who holds it is written beside it (`serve.json`: pid and URL),
 * for the refusal's message only: that file decides nothing.
 */

export const LOCK_FILE = 'serve.lock';
export const HOLDER_FILE = 'serve.json';

export interface LockHolder {
  pid: number;
  url: string | null;
  startedAt: string;
}

export class DataDirBusyError extends Error {
  constructor(
    readonly dataDir: string,
    readonly holder: LockHolder | null,
  ) {
    const who = holder
      ? `pid ${holder.pid}${holder.url ? `, ${holder.url}` : ''}, since ${holder.startedAt}`
      : 'its pid is unknown';
    super(
      `another warren server is running on data dir ${dataDir} (${who}); stop it first, or give this one another --data-dir`,
    );
    this.name = 'DataDirBusyError';
  }
}

export interface DataDirLock {
  readonly dataDir: string;
  /** Record the server's URL beside the lock, once it listens. */
  announce(url: string): void;
  /** Drop the lock (and the holder file): the next server may start. */
  release(): void;
}

/** Who holds the lock, as the holder wrote it; null when unknown or unreadable. */
export function readHolder(dataDir: string): LockHolder | null {
  try {
    const h = JSON.parse(readFileSync(join(dataDir, HOLDER_FILE), 'utf8')) as Partial<LockHolder>;
    if (typeof h.pid !== 'number') return null;
    return {
      pid: h.pid,
      url: typeof h.url === 'string' ? h.url : null,
      startedAt: String(h.startedAt ?? '?'),
    };
  } catch {
    return null;
  }
}

/**
 * Take the data dir's lock, or throw `DataDirBusyError` naming the server that holds it.
 * Never waits: a second server refuses at once and touches nothing.
 */
export function lockDataDir(dir: string, pid = process.pid): DataDirLock {
  const dataDir = resolve(dir);
  securePrivateDir(dataDir);
  const file = join(dataDir, LOCK_FILE);
  ensurePrivateFile(file);
  let db: Database.Database | null = null;
  try {
    db = new Database(file, { timeout: 0 });
    // No journal: nothing is ever written, the transaction exists only to hold the lock.
    db.pragma('journal_mode = OFF');
    db.exec('BEGIN EXCLUSIVE');
  } catch (error) {
    db?.close();
    if ((error as { code?: string }).code === 'SQLITE_BUSY')
      throw new DataDirBusyError(dataDir, readHolder(dataDir));
    throw error;
  }
  const holder: LockHolder = { pid, url: null, startedAt: new Date().toISOString() };
  const write = () => {
    // Written whole and renamed: a refused server never reads half a file.
    const tmp = join(dataDir, `${HOLDER_FILE}.${pid}.tmp`);
    writeFileSync(tmp, `${JSON.stringify(holder)}\n`, { mode: FILE_MODE });
    renameSync(tmp, join(dataDir, HOLDER_FILE));
  };
  write();
  const held = db;
  let released = false;
  return {
    dataDir,
    announce(url) {
      if (released) return;
      holder.url = url;
      write();
    },
    release() {
      if (released) return;
      released = true;
      rmSync(join(dataDir, HOLDER_FILE), { force: true });
      held.close();
    },
  };
}
