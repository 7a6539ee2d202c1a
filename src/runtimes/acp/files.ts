import { lstat, mkdir, readFile, readlink, realpath, writeFile } from 'node:fs/promises';
import { basename, dirname, isAbsolute, join, relative, resolve, sep } from 'node:path';

/**
 * The ACP client's file system, confined to one directory: the session's working directory.
 * Paths must be absolute (ACP requires it) and, once symlinks are resolved, inside the root.
 * Anything else is refused with a `FileRefused` naming why.
 */
export class FileRefused extends Error {
  constructor(
    message: string,
    readonly why: 'outside' | 'relative' | 'missing' | 'not_a_file',
  ) {
    super(message);
  }
}

export class ConfinedFiles {
  private realRoot: Promise<string>;

  constructor(readonly root: string) {
    this.realRoot = realpath(root).catch(() => resolve(root));
  }

  /** Read a text file; `line` is 1-based, `limit` a number of lines. */
  async read(path: string, line?: number | null, limit?: number | null): Promise<string> {
    const target = await this.inside(path, 'read');
    let content: string;
    try {
      content = await readFile(target, 'utf8');
    } catch (error) {
      const code = (error as NodeJS.ErrnoException).code;
      if (code === 'ENOENT') throw new FileRefused(`${path} does not exist`, 'missing');
      if (code === 'EISDIR') throw new FileRefused(`${path} is a directory`, 'not_a_file');
      throw error;
    }
    if (line == null && limit == null) return content;
    const lines = content.split('\n');
    const start = Math.max(0, (line ?? 1) - 1);
    const end = limit == null ? lines.length : start + Math.max(0, limit);
    return lines.slice(start, end).join('\n');
  }

  /** Write a text file, creating it (and its parent directories, inside the root) if needed. */
  async write(path: string, content: string): Promise<void> {
    const target = await this.inside(path, 'write');
    await mkdir(dirname(target), { recursive: true });
    await writeFile(target, content, 'utf8');
  }

  /** The real path `path` names, if it is inside the root; refuses otherwise. */
  private async inside(path: string, op: 'read' | 'write'): Promise<string> {
    if (typeof path !== 'string' || !isAbsolute(path)) {
      throw new FileRefused(`${JSON.stringify(path)} is not an absolute path`, 'relative');
    }
    const root = await this.realRoot;
    const real = await realOrNearest(resolve(path));
    if (real === null) throw new FileRefused(`${path} does not exist`, 'missing');
    const rel = relative(root, real);
    if (rel === '') throw new FileRefused(`${path} is the working directory itself`, 'not_a_file');
    if (rel === '..' || rel.startsWith(`..${sep}`) || isAbsolute(rel)) {
      throw new FileRefused(
        `${op} refused: ${path} is outside the session's working directory ${this.root}`,
        'outside',
      );
    }
    return real;
  }
}

/**
 * The real path of `p`; when it does not exist yet, the real path of its nearest existing
 * ancestor joined with the rest (so a write through a symlinked directory is judged by
 * where it lands). A dangling symlink is followed by hand, so it cannot point outside.
 */
async function realOrNearest(p: string): Promise<string | null> {
  const rest: string[] = [];
  let cur = p;
  for (let hops = 0; hops < 64; hops++) {
    try {
      const real = await realpath(cur);
      return rest.length ? join(real, ...rest.reverse()) : real;
    } catch {}
    // A dangling symlink: judge it by its target.
    try {
      const st = await lstat(cur);
      if (st.isSymbolicLink()) {
        const to = await readlink(cur);
        cur = resolve(dirname(cur), to);
        continue;
      }
    } catch {}
    const parent = dirname(cur);
    if (parent === cur) return null;
    rest.push(basename(cur));
    cur = parent;
  }
  return null;
}
