import { closeSync, constants, fstatSync, openSync, readSync, realpathSync } from 'node:fs';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { invalid } from '../../vocab/errors.ts';

/**
 * Read a script file named by a caller. Only under an allowed root (after resolving `..`
 * and symlinks), only a regular file (checked on the opened fd, so /dev/zero, FIFOs and
 * directories are refused without a read), and only up to `maxBytes`. Errors name the path
 * the caller gave and never what is in the file.
 */
export function readScriptFile(file: string, roots: readonly string[], maxBytes: number): string {
  const say = (why: string) => invalid(`script file ${JSON.stringify(file)}: ${why}`);
  const lexical = resolve(file);
  // Outside every root as written: refused without touching the file system, so the answer
  // says nothing about what exists there.
  if (!roots.some((r) => within(resolve(r), lexical))) throw say('not under an allowed root');
  let real: string;
  try {
    real = realpathSync(lexical);
  } catch {
    throw say('not found');
  }
  if (!roots.some((r) => within(canonical(r), real))) throw say('not under an allowed root');
  let fd: number;
  try {
    // O_NONBLOCK: opening a FIFO must not wait for a writer; O_NOFOLLOW: no swapped-in symlink.
    fd = openSync(real, constants.O_RDONLY | constants.O_NONBLOCK | constants.O_NOFOLLOW);
  } catch {
    throw say('cannot be opened');
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw say('not a regular file');
    if (st.size > maxBytes) throw say(`${st.size} bytes; the limit is ${maxBytes}`);
    // One byte more than fstat said: a file that grows while it is read is caught, not followed.
    const buf = Buffer.alloc(st.size + 1);
    let n = 0;
    for (let got = -1; got !== 0 && n < buf.length; n += got)
      got = readSync(fd, buf, n, buf.length - n, null);
    if (n > st.size) throw say('changed while it was read');
    return buf.subarray(0, n).toString('utf8');
  } finally {
    closeSync(fd);
  }
}

function within(root: string, path: string): boolean {
  const rel = relative(root, path);
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
}

function canonical(root: string): string {
  try {
    return realpathSync(resolve(root));
  } catch {
    return resolve(root);
  }
}
