/**
 * Containment benches (docs/security.md, "Containment"):
 *
 * - spawnConfined: an agent process started through spawnGroup in a bubblewrap sandbox
 *   (warren's own options: namespaces, mounts, no capabilities, options on fd 4) until it has
 *   exited, `/bin/sh -c 'exit 0'`; baseline: the same process unconfined, interleaved in the
 *   same run. The difference is what confinement adds to every agent start.
 * - spawnConfinedOffline: the same with network `none` (a fresh network namespace, the bridge
 *   socket, and node running the loopback forwarder before the agent).
 */
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { findBwrap, probeBwrap } from '../src/runtimes/process/confine.ts';
import type { ConfineOptions } from '../src/runtimes/process/group.ts';
import { spawnGroup } from '../src/runtimes/process.ts';
import type { BenchRow } from './store.ts';

const round = (n: number) => Number(n.toFixed(2));
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** A fresh bridge socket per start, as each agent has its own private directory. */
const fresh = (c: ConfineOptions | undefined, n: number): ConfineOptions | undefined =>
  c?.sandbox.socket ? { ...c, sandbox: { ...c.sandbox, socket: `${c.sandbox.socket}.${n}` } } : c;

function once(confine: ConfineOptions | undefined, cwd: string): Promise<number> {
  const t = performance.now();
  const child = spawnGroup('/bin/sh', ['-c', 'exit 0'], {
    cwd,
    env: { PATH: process.env.PATH ?? '/usr/bin:/bin' },
    run: 'bench',
    ...(confine ? { confine } : {}),
  });
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code) =>
      code === 0 ? resolve(performance.now() - t) : reject(new Error(`exited ${code}`)),
    );
  });
}

async function compare(network: 'full' | 'none', rounds = 30): Promise<BenchRow[]> {
  const name = network === 'full' ? 'spawnConfined' : 'spawnConfinedOffline';
  const bwrap = findBwrap();
  const why = await probeBwrap(bwrap);
  if (why || !bwrap) return [{ name, value: Number.NaN, unit: 'ms', note: `skipped: ${why}` }];
  const dir = mkdtempSync(join(tmpdir(), 'warren-bench-contain-'));
  const cwd = join(dir, 'work');
  const home = join(dir, 'home');
  mkdirSync(cwd);
  mkdirSync(home);
  const confine: ConfineOptions = {
    bwrap,
    home,
    sandbox: {
      hide: [join(dir, 'data')],
      writable: [cwd],
      readable: [],
      network,
      cwd,
      ...(network === 'none' ? { socket: join(dir, 'warren.sock') } : {}),
    },
    ...(network === 'none' ? { endpoint: { host: '127.0.0.1', port: 7709 } } : {}),
  };
  mkdirSync(join(dir, 'data'));
  try {
    const plain: number[] = [];
    const boxed: number[] = [];
    for (let i = 0; i < 3; i++) {
      await once(undefined, cwd);
      await once(fresh(confine, i), cwd);
    }
    for (let i = 0; i < rounds; i++) {
      plain.push(await once(undefined, cwd));
      boxed.push(await once(fresh(confine, 100 + i), cwd));
    }
    const value = round(median(boxed));
    const baseline = round(median(plain));
    return [
      {
        name,
        value,
        unit: 'ms',
        baseline,
        ratio: round(value / baseline),
        note: `median of ${rounds}, start to exit of sh -c 'exit 0'; baseline unconfined, interleaved`,
      },
    ];
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

export const containmentBenches = {
  spawnConfined: () => compare('full'),
  spawnConfinedOffline: () => compare('none'),
};
