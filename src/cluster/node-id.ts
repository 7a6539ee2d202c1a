import { createHash } from 'node:crypto';
import { realpathSync } from 'node:fs';
import { hostname } from 'node:os';
import { basename, dirname, join, resolve } from 'node:path';

/**
 * This node's id, when none is configured. The kernel marks its agent processes with it and,
 * after a crash, ends what a previous run with the same id left behind: so it must be stable
 * across restarts of the same server and differ between servers that could run side by side.
 *
 * - SQLite: the real path of the data dir and of the database file. Two servers on one
 *   machine never share both, and a symlinked or relative data dir gives the same id.
 * - PostgreSQL: the database (URL without user or password: rotating a password keeps the
 *   id; the schema is kept) plus the data dir's real path plus the host name, because
 *   several machines share one database and may well use the same path.
 */
export function deriveNodeId(dataDir: string, db: string | null, host: string = hostname()): string {
  const dir = realish(dataDir);
  const parts =
    db && isPostgres(db)
      ? ['postgres', databaseIdentity(db), dir, host]
      : ['sqlite', dir, realish(db ?? join(dataDir, 'warren.db'))];
  return createHash('sha256').update(parts.join('\0')).digest('hex').slice(0, 12);
}

export const isPostgres = (db: string) => /^postgres(ql)?:\/\//.test(db);

/** Where the database is, not who logs in to it. */
function databaseIdentity(url: string): string {
  try {
    const u = new URL(url);
    const schema = u.searchParams.get('schema');
    return `${u.hostname}:${u.port || '5432'}${u.pathname}${schema ? `?schema=${schema}` : ''}`;
  } catch {
    return url;
  }
}

/** The real path of a file that may not exist yet: its nearest existing ancestor's, plus the rest. */
function realish(path: string): string {
  const abs = resolve(path);
  try {
    return realpathSync(abs);
  } catch {
    const parent = dirname(abs);
    return parent === abs ? abs : join(realish(parent), basename(abs));
  }
}
