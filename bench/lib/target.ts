import { join } from 'node:path';
import type { Warren } from '../../src/syscalls/warren.ts';
import { Warren as WarrenClass } from '../../src/syscalls/warren.ts';
import { testKernel, type WarrenTarget } from '../../test/helpers/warrens.ts';
import { tempDir } from './tempdir.ts';

/**
 * A SQLite WarrenTarget outside node:test, for benches that reuse a test's code (the fuzz
 * cases, the spawn/stop cycles): fresh warrens in a temp dir with the tests' kernel timings,
 * all closed and the dir removed on dispose (`await using t = benchTarget()`).
 */
export function benchTarget(): WarrenTarget & { [Symbol.asyncDispose](): Promise<void> } {
  const tmp = tempDir('warren-bench-target-');
  const open: Warren[] = [];
  let n = 0;
  const location = () => ({ url: join(tmp.dir, `w${n++}.db`), durability: 'process' as const });
  return {
    kind: 'sqlite',
    location,
    async open(opts = {}) {
      const { location: loc = location(), kernel, ...rest } = opts;
      const w = await WarrenClass.open({ db: loc.url, kernel: { ...testKernel, ...kernel }, ...rest });
      open.push(w);
      return w;
    },
    async [Symbol.asyncDispose]() {
      await Promise.allSettled(open.splice(0).map((w) => w.close()));
      tmp[Symbol.dispose]();
    },
  };
}
