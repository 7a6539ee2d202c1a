import { readdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * Run test files in this one process, taking each from a queue that the run's other workers
 * (scripts/test.mjs starts one a slot) take from too: the sources are loaded through tsx once a
 * worker instead of once a file, and a worker that is done with a file takes the next longest
 * one left, so the run ends within about one file of its balance. Each file becomes a suite
 * named for its path, its top-level hooks its own, run around its own tests; a worker runs its
 * files one after another, as the tests of one file run.
 *
 * node:test gives a test to the suite whose async context declares it, and a module's top
 * level runs in no context of ours (and, when two files wait on one module's top-level await,
 * in the first one's). So while a file loads, what its top level declares is recorded, not
 * declared; then its declarations are replayed inside its own suite, synchronously, where
 * node:test cannot place them anywhere else. A file that fails to load is a failed suite, not a
 * dead worker.
 */

type Fn = (...args: unknown[]) => unknown;
type Api = Fn & Partial<Record<Variant, Fn>>;
type Variant = 'skip' | 'todo' | 'only';
interface Declaration {
  name: Name;
  variant?: Variant;
  args: unknown[];
}

const NAMES = ['describe', 'suite', 'it', 'test', 'before', 'after', 'beforeEach', 'afterEach'] as const;
type Name = (typeof NAMES)[number];
const VARIANTS: Variant[] = ['skip', 'todo', 'only'];

/**
 * Take the next file from `queue` (a folder of numbered entries, each a file's path; the lowest
 * number first): an entry is taken by renaming it away, which only one worker can do.
 */
function take(queue: string): string | undefined {
  for (const entry of readdirSync(queue).sort()) {
    if (entry.startsWith('.')) continue;
    const mine = join(queue, `.taken-${entry}-${process.pid}`);
    try {
      renameSync(join(queue, entry), mine);
    } catch {
      continue; // another worker took it first
    }
    return readFileSync(mine, 'utf8');
  }
  return undefined;
}

export async function runQueue(queue: string, root: string): Promise<void> {
  const nodeTest = createRequire(import.meta.url)('node:test') as Record<Name, Api>;
  const real = Object.fromEntries(NAMES.map((n) => [n, nodeTest[n]])) as Record<Name, Api>;
  let declared: Declaration[] = [];
  let recording = false;
  // A loaded file still calls what it imported (a module may have copied the binding), so each
  // stand-in hands calls made outside a load (from inside the suites) to node:test itself.
  const recorder = (name: Name, variant?: Variant): Fn => {
    const api = variant ? real[name][variant]! : real[name];
    return (...args) => {
      if (!recording) return api(...args);
      declared.push({ name, variant, args });
      return Promise.resolve();
    };
  };
  for (const name of NAMES) {
    const api = recorder(name) as Api;
    for (const v of VARIANTS) if (real[name][v]) api[v] = recorder(name, v);
    nodeTest[name] = api;
  }
  syncBuiltinESMExports();
  const took = timings();
  // A file is bounded as it was in a process of its own; the worker as a whole is not.
  const timeout = Number(process.env.WARREN_TEST_FILE_TIMEOUT_MS) || Number.POSITIVE_INFINITY;
  try {
    for (let file = take(queue); file !== undefined; file = take(queue)) {
      declared = [];
      recording = true;
      let error: unknown;
      try {
        await import(pathToFileURL(file).href);
      } catch (e) {
        error = e ?? new Error(`${file} did not load`);
      } finally {
        recording = false;
      }
      await runSuite(real, relative(root, file), declared, error, timeout, took);
    }
  } finally {
    Object.assign(nodeTest, real);
    syncBuiltinESMExports();
  }
}

/** One file's suite: its declarations replayed inside it (or its load's failure); done when it is. */
function runSuite(
  real: Record<Name, Api>,
  name: string,
  declared: Declaration[],
  error: unknown,
  timeout: number,
  took: Map<string, number> | undefined,
): Promise<unknown> {
  return Promise.resolve(
    real.describe(name, { timeout }, () => {
      if (took) {
        let t0 = 0;
        real.before(() => {
          t0 = performance.now();
        });
        real.after(() => took.set(name, (performance.now() - t0) / 1000));
      }
      if (error !== undefined) {
        real.it('loads', () => {
          throw error;
        });
        return;
      }
      for (const d of declared) {
        const api = d.variant ? real[d.name][d.variant] : real[d.name];
        api?.(...d.args);
      }
    }),
  );
}

/**
 * Each file's time, for scripts/test.mjs to pack shards by (`--durations`): written when this
 * process ends, to the folder `WARREN_TEST_RESULTS` names. Kept here because the TAP that
 * `node --test` prints for two processes at once interleaves their suites.
 */
function timings(): Map<string, number> | undefined {
  const dir = process.env.WARREN_TEST_RESULTS;
  if (!dir) return undefined;
  const took = new Map<string, number>();
  process.once('exit', () => {
    writeFileSync(join(dir, `durations-${process.pid}.json`), JSON.stringify(Object.fromEntries(took)));
  });
  return took;
}
