import { chmodSync, closeSync, existsSync, mkdirSync, openSync, statSync } from 'node:fs';

/**
 * The host's side is private (DESIGN.md §6): the database holds spawn environments and
 * session state, so only the server's user may read it. The directory is created 0700 and
 * the database file 0600 before SQLite opens it: SQLite gives its -wal and -shm files the
 * database's mode. Files left looser by an older version are tightened, with a warning.
 */
export const DIR_MODE = 0o700;
export const FILE_MODE = 0o600;

type Warn = (message: string) => void;
const stderrWarn: Warn = (m) => process.stderr.write(`warren: warning: ${m}\n`);

/**
 * Create a directory 0700 if it is missing. An existing one is left alone: a database
 * given by path may live in a shared directory (the working directory, /tmp) that is not
 * ours to lock down; its file is 0600 all the same.
 */
export function ensurePrivateDir(dir: string): void {
  if (existsSync(dir)) return;
  mkdirSync(dir, { recursive: true, mode: DIR_MODE });
}

/** Warren's own data dir: created 0700, or tightened to 0700 if it is looser. */
export function securePrivateDir(dir: string, warn: Warn = stderrWarn): void {
  if (existsSync(dir)) tighten(dir, DIR_MODE, warn);
  else ensurePrivateDir(dir);
}

/** Create `path` 0600 if missing, or tighten it to 0600 if it is looser. */
export function ensurePrivateFile(path: string, warn: Warn = stderrWarn): void {
  if (!existsSync(path)) {
    closeSync(openSync(path, 'a', FILE_MODE));
    return;
  }
  tighten(path, FILE_MODE, warn);
}

/** The database and its WAL companions, whichever exist. */
export function securePrivateFiles(paths: readonly string[], warn: Warn = stderrWarn): void {
  for (const p of paths) if (existsSync(p)) tighten(p, FILE_MODE, warn);
}

function tighten(path: string, wanted: number, warn: Warn): void {
  const mode = statSync(path).mode & 0o777;
  if ((mode & ~wanted) === 0) return;
  chmodSync(path, wanted);
  warn(
    `${path} was mode ${octal(mode)}; changed to ${octal(wanted)} (it must not be readable by other users)`,
  );
}

const octal = (mode: number) => `0${mode.toString(8).padStart(3, '0')}`;
