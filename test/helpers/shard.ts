import { writeFileSync } from 'node:fs';
import { createRequire, syncBuiltinESMExports } from 'node:module';
import { join, relative } from 'node:path';
import { pathToFileURL } from 'node:url';

/**
 * Run several test files in this one process (scripts/test.mjs makes a shard of them): the
 * sources are loaded through tsx once for the shard instead of once for each file. Each file
 * becomes a suite named for its path, its top-level hooks its own, run around its own tests;
 * the files run one after another, as the tests of one file do.
 *
 * node:test gives a test to the suite whose async context declares it, and a module's top
 * level runs in no context of ours (and, when two files wait on one module's top-level await,
 * in the first one's). So while the files load, one after another, what their top levels
 * declare is recorded, not declared; then each file's declarations are replayed inside its
 * own suite, synchronously, where node:test cannot place them anywhere else. A file that fails
 * to load is a failed suite, not a dead shard.
 */

type Fn = (...args: unknown[]) => unknown;
type Api = Fn & Partial<Record<Variant, Fn>>;
type Variant = 'skip' | 'todo' | 'only';
interface Declaration {
  name: Name;
  variant?: Variant;
  args: unknown[];
}

/** A shard still running this long after its last test says what holds it. */
const LINGER_WARN_MS = 10_000;
const NAMES = ['describe', 'suite', 'it', 'test', 'before', 'after', 'beforeEach', 'afterEach'] as const;
type Name = (typeof NAMES)[number];
const VARIANTS: Variant[] = ['skip', 'todo', 'only'];

export async function runFiles(files: string[], root: string): Promise<void> {
  const nodeTest = createRequire(import.meta.url)('node:test') as Record<Name, Api>;
  const real = Object.fromEntries(NAMES.map((n) => [n, nodeTest[n]])) as Record<Name, Api>;
  const loaded: { file: string; declared: Declaration[]; error?: unknown }[] = [];
  let declared: Declaration[] = [];
  let recording = true;
  // Once loaded, a file still calls what it imported (a module may have copied the binding),
  // so each stand-in hands later calls, from inside the suites, to node:test itself.
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
  try {
    for (const file of files) {
      declared = [];
      try {
        await import(pathToFileURL(file).href);
        loaded.push({ file, declared });
      } catch (error) {
        loaded.push({ file, declared, error });
      }
    }
  } finally {
    recording = false;
    Object.assign(nodeTest, real);
    syncBuiltinESMExports();
  }
  const took = timings();
  // A file is bounded as it was in a process of its own; the shard as a whole is not.
  const timeout = Number(process.env.WARREN_TEST_FILE_TIMEOUT_MS) || Number.POSITIVE_INFINITY;
  // A file's leftovers (a child not stopped, a worker still busy) hold the shard's slot past
  // its last test: a runaway read kept one alive 72–108 s. Say so, and what is left.
  real.after(() => {
    setTimeout(() => {
      const left = process.getActiveResourcesInfo().filter((r) => r !== 'TTYWrap');
      process.stderr.write(
        `# warning: this shard (${files.map((f) => relative(root, f)).join(', ')}) is still running ` +
          `${LINGER_WARN_MS / 1000} s after its last test, held by: ${left.join(', ')}\n`,
      );
    }, LINGER_WARN_MS).unref();
  });
  for (const { file, declared, error } of loaded) {
    const name = relative(root, file);
    real.describe(name, { timeout }, () => {
      if (took) {
        let t0 = 0;
        real.before(() => {
          t0 = performance.now();
        });
        real.after(() => took.set(name, (performance.now() - t0) / 1000));
      }
      if (error) {
        real.it('loads', () => {
          throw error;
        });
        return;
      }
      for (const d of declared) {
        const api = d.variant ? real[d.name][d.variant] : real[d.name];
        api?.(...d.args);
      }
    });
  }
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
