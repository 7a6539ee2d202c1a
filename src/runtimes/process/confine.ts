import { spawn } from 'node:child_process';
import { isAbsolute, relative, resolve, sep } from 'node:path';
import { resolveExecutable } from './exec.ts';

/**
 * How one agent process is confined with bubblewrap (see docs/security.md, "Containment"):
 * its own pid, ipc, uts and cgroup namespaces, no capabilities, no new privileges, a fresh
 * /proc, /dev and /tmp, the host's filesystem read-only, some paths hidden under an empty
 * tmpfs, a few writable (its working directory, its home). With `network: 'none'` it has a
 * network namespace of its own, with loopback only, and reaches warren through a unix socket
 * bound at `SANDBOX_SOCKET` (see bridge.ts).
 */
export interface Confinement {
  /** Hidden: an empty tmpfs over each (warren's data dir, other agents' private files, the server's home). */
  hide: readonly string[];
  /** Writable binds (its working directory, its home, its temp). */
  writable: readonly string[];
  /** Read-only binds back into a hidden path (warren's own package, node, a runtime's private config). */
  readable: readonly string[];
  network: 'full' | 'none';
  /** The working directory inside (one of `writable`, or any visible path). */
  cwd: string;
  /** The host socket bound at SANDBOX_SOCKET (network `none`). */
  socket?: string;
}

/** Where the agent finds warren's socket inside its sandbox (in its own /tmp). */
export const SANDBOX_SOCKET = '/tmp/warren/warren.sock';

/** The bwrap executable, or null (not installed, not Linux). */
export function findBwrap(path = process.env.PATH ?? ''): string | null {
  if (process.platform !== 'linux') return null;
  return resolveExecutable('bwrap', `${path}:/usr/bin:/bin`);
}

/**
 * Whether bwrap can make a sandbox here (it may be installed but refused user namespaces).
 * Resolves null when it works, else why not. A child process, waited for off the event loop:
 * a server's start does other work meanwhile.
 */
export async function probeBwrap(bwrap: string | null = findBwrap()): Promise<string | null> {
  if (!bwrap) {
    return process.platform === 'linux'
      ? 'bubblewrap (bwrap) is not installed'
      : `not Linux (${process.platform})`;
  }
  const why = await new Promise<string | null>((resolve) => {
    const child = spawn(
      bwrap,
      [
        ...BASE,
        '--unshare-net',
        '--ro-bind',
        '/',
        '/',
        '--proc',
        '/proc',
        '--dev',
        '/dev',
        '--',
        '/bin/true',
      ],
      { stdio: ['ignore', 'ignore', 'pipe'], timeout: 10_000 },
    );
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (c: string) => {
      stderr += c;
    });
    child.once('error', (error) => resolve(error.message));
    child.once('close', (code, signal) =>
      resolve(code === 0 ? null : stderr.trim() || `exit ${code ?? signal}`),
    );
  });
  return why === null ? null : `bwrap cannot make a sandbox here: ${why}`;
}

/** Namespaces and privileges, whatever the mounts. */
const BASE = [
  '--die-with-parent',
  '--new-session',
  '--unshare-pid',
  '--unshare-ipc',
  '--unshare-uts',
  '--unshare-cgroup-try',
  '--cap-drop',
  'ALL',
];

type Mount = { path: string; op: '--tmpfs' | '--bind' | '--ro-bind' };

/**
 * bwrap's options for running confined (the command follows them after `--`). Mounts go shallowest first, so a deeper path
 * lands on top: a working directory inside the hidden home is bound back over it, a data dir
 * inside the working directory is hidden over it.
 */
export function bwrapOptions(c: Confinement): string[] {
  const mounts: Mount[] = [
    ...[...new Set(c.hide)].filter((p) => p !== '/tmp').map((path) => ({ path, op: '--tmpfs' as const })),
    ...c.readable.map((path) => ({ path, op: '--ro-bind' as const })),
    ...c.writable.map((path) => ({ path, op: '--bind' as const })),
  ];
  // A hide wins a tie with a bind: a path both hidden and writable stays hidden.
  const rank = { '--ro-bind': 0, '--bind': 1, '--tmpfs': 2 };
  mounts.sort((a, b) => depth(a.path) - depth(b.path) || rank[a.op] - rank[b.op]);
  const out = [...BASE];
  if (c.network === 'none') out.push('--unshare-net');
  out.push('--ro-bind', '/', '/', '--dev', '/dev', '--proc', '/proc', '--tmpfs', '/tmp');
  for (const m of mounts) {
    if (m.op === '--tmpfs') out.push('--tmpfs', m.path);
    else out.push(m.op, m.path, m.path);
  }
  if (c.socket) out.push('--dir', '/tmp/warren', '--bind', c.socket, SANDBOX_SOCKET);
  out.push('--chdir', c.cwd);
  return out;
}

const depth = (p: string) => resolve(p).split(sep).filter(Boolean).length;

/** `path` is `root` or lies under it. */
export const inside = (path: string, root: string) => {
  const rel = relative(resolve(root), resolve(path));
  return rel === '' || (rel !== '..' && !rel.startsWith(`..${sep}`) && !isAbsolute(rel));
};
