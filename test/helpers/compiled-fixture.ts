/**
 * A TypeScript fixture that tests run as an agent's child process, compiled once to plain
 * JavaScript (esbuild strips the types; imports stay as they are), so each spawn starts plain
 * node instead of loading tsx and transforming the file again — the ACP tests spawn dozens.
 * The output lives under node_modules/.cache, named by a hash of the source (node resolves its
 * packages from there as from the project), written whole or not at all.
 */
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { basename, join } from 'node:path';
import { transformSync } from 'esbuild';

const CACHE_DIR = join(import.meta.dirname, '../../node_modules/.cache/warren-tests');

/** The path of `tsPath` compiled to an ES module. */
export function compiledFixture(tsPath: string): string {
  const source = readFileSync(tsPath, 'utf8');
  const hash = createHash('sha256').update(source).digest('hex').slice(0, 16);
  const out = join(CACHE_DIR, `${basename(tsPath, '.ts')}-${hash}.mjs`);
  if (existsSync(out)) return out;
  const { code } = transformSync(source, {
    loader: 'ts',
    format: 'esm',
    target: 'node20',
    sourcefile: tsPath,
  });
  mkdirSync(CACHE_DIR, { recursive: true });
  const tmp = `${out}.${process.pid}`;
  writeFileSync(tmp, code);
  renameSync(tmp, out);
  return out;
}
