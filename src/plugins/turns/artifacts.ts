import { closeSync, lstatSync, openSync, readdirSync, readSync, realpathSync, statSync } from 'node:fs';
import { isAbsolute, join, relative, sep } from 'node:path';
import { forbidden, invalid, notFound } from '../../vocab/errors.ts';
import { isInside } from './policy.ts';

export interface ArtifactEntry {
  path: string;
  type: 'file' | 'dir' | 'symlink';
  bytes: number;
}

export interface ArtifactRead {
  path: string;
  bytes: number;
  content: string | null;
  encoding: 'utf8' | null;
  binary: boolean;
  truncated: boolean;
}

/**
 * A path an agent or coordinator named, resolved under a session's working directory:
 * absolute paths and `..` are refused before touching the disk, and the canonical path
 * (symlinks followed) must still be under the canonical root, so a link cannot lead out.
 */
export function resolveUnder(root: string, path: string): { real: string; rel: string } {
  if (path.includes('\0')) throw invalid('path contains a NUL byte');
  if (isAbsolute(path))
    throw forbidden(`artifact paths are relative to the session's working directory: ${path}`);
  if (path.split(/[\\/]/).includes('..')) throw forbidden(`artifact path may not contain "..": ${path}`);
  const canonicalRoot = realpathSync(root);
  let real: string;
  try {
    real = realpathSync(join(canonicalRoot, path));
  } catch {
    throw notFound('artifact', path);
  }
  if (!isInside(canonicalRoot, real))
    throw forbidden(`artifact ${path} resolves outside the session's working directory`);
  return { real, rel: relative(canonicalRoot, real).split(sep).join('/') || '.' };
}

/** One directory level, bounded; entries whose links lead outside are listed but marked, never followed. */
export function listArtifacts(
  root: string,
  dir: string,
  limit: number,
): { entries: ArtifactEntry[]; truncated: boolean } {
  const { real, rel } = resolveUnder(root, dir === '' ? '.' : dir);
  if (!statSync(real).isDirectory()) throw invalid(`${dir} is not a directory`);
  const names = readdirSync(real).sort();
  const entries: ArtifactEntry[] = [];
  for (const name of names.slice(0, limit)) {
    const st = lstatSync(join(real, name));
    entries.push({
      path: rel === '.' ? name : `${rel}/${name}`,
      type: st.isSymbolicLink() ? 'symlink' : st.isDirectory() ? 'dir' : 'file',
      bytes: st.isFile() ? st.size : 0,
    });
  }
  return { entries, truncated: names.length > limit };
}

/** Reads at most `cap` bytes; a NUL byte or invalid UTF-8 in them means binary (no content returned). */
export function readArtifact(root: string, path: string, cap: number): ArtifactRead {
  const { real, rel } = resolveUnder(root, path);
  const st = statSync(real);
  if (!st.isFile()) throw invalid(`${path} is not a regular file`);
  const n = Math.min(st.size, cap);
  const buf = Buffer.alloc(n);
  const fd = openSync(real, 'r');
  try {
    readSync(fd, buf, 0, n, 0);
  } finally {
    closeSync(fd);
  }
  const truncated = st.size > cap;
  const binary = isBinary(buf, truncated);
  return {
    path: rel,
    bytes: st.size,
    content: binary ? null : buf.toString('utf8'),
    encoding: binary ? null : 'utf8',
    binary,
    truncated,
  };
}

function isBinary(buf: Buffer, cut: boolean): boolean {
  if (buf.includes(0)) return true;
  // A cut may split a multi-byte character: only the last 3 bytes are allowed to be partial.
  const body = cut ? buf.subarray(0, Math.max(0, buf.length - 3)) : buf;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(body);
    return false;
  } catch {
    return true;
  }
}
