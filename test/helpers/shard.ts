import { relative } from 'node:path';
import { describe } from 'node:test';
import { pathToFileURL } from 'node:url';

/**
 * Run several test files in this one process (scripts/test.mjs makes a shard of them): the
 * sources are loaded through tsx once for the shard instead of once for each file. Each file
 * becomes a suite named for its path, so its top-level `before`/`after` hooks stay its own and
 * run around its own tests, and a file that fails to load is a failed suite, not a dead shard.
 * The files run one after another, as the tests of one file do.
 */
export function runFiles(files: string[], root: string): void {
  for (const file of files) {
    describe(relative(root, file), async () => {
      await import(pathToFileURL(file).href);
    });
  }
}
