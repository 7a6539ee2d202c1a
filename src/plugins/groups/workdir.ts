import { cpSync, existsSync, mkdirSync, renameSync, rmSync } from 'node:fs';
import { basename, dirname, join, relative, resolve } from 'node:path';
import { invalid } from '../../vocab/errors.ts';

/**
 * Where group agents work: outside the data dir, so that neither `..` from a group's folder
 * nor a bind of it into a sandbox reaches the operator key, the token secret or the database.
 * Default: the data dir's sibling `<data-dir>-groups/` (`.warren` → `.warren-groups/main`),
 * found beside it, as private (0700). A configured `workDir` inside the data dir is refused.
 */
export function groupsWorkDir(dataDir: string, configured?: string): string {
  const data = resolve(dataDir);
  const dir = configured ? resolve(configured) : join(dirname(data), `${basename(data)}-groups`);
  const rel = relative(data, dir);
  if (rel === '' || (!rel.startsWith('..') && !rel.startsWith('/'))) {
    throw invalid(
      `plugins.groups.workDir ${dir} is inside the data dir ${data}: group agents must work outside it`,
      { field: 'plugins.groups.workDir' },
    );
  }
  return dir;
}

/**
 * Move a group's folder from where it was before issue 25 (`<data-dir>/groups/<folder>`) to
 * its new place, when only the old one exists. Called as the group's agent starts afresh, when
 * no agent works there: a suspended session keeps its old working directory until it ends.
 */
export function moveOldFolder(from: string, to: string): void {
  if (!existsSync(from) || existsSync(to)) return;
  mkdirSync(dirname(to), { recursive: true, mode: 0o700 });
  try {
    renameSync(from, to);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== 'EXDEV') throw error;
    // Another file system: copy, then remove.
    cpSync(from, to, { recursive: true, preserveTimestamps: true });
    rmSync(from, { recursive: true, force: true });
  }
}
