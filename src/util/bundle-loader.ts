import { isAscii } from 'node:buffer';
import { readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname } from 'node:path';
import { fileURLToPath } from 'node:url';
import vm from 'node:vm';

/**
 * Loads one of the build's CommonJS bundles (dist/app/server.cjs, the `warren mcp` relay) with
 * V8's code cache. Compiling the server's 7 MB bundle was the largest part of `warren serve`'s
 * start, and Node 20 has no compile cache for ES modules (`module.enableCompileCache` is
 * Node 22+), so the bundles are CommonJS, compiled here by `vm.Script` with the cached data
 * V8 produced on an earlier start. scripts/bundle-server.mjs writes the small ES module
 * (dist/app/server.js …) that calls this and re-exports the bundle's exports.
 *
 * The cache lives beside the bundle, named after the build's content hash and V8's version, so
 * a rebuild or another Node never reads a stale one (V8's own check is the source's length
 * only). It is written only there: code loaded from a place others can write (a temp dir)
 * would run whatever they put in it. A directory that cannot be written means no cache, and
 * the bundle compiles from source as before.
 */
export interface LoadedBundle {
  readonly exports: Record<string, unknown>;
  /** Whether V8 took the cached code (false: none yet, or rejected). */
  readonly fromCache: boolean;
  /**
   * Writes the code cache if there was none usable; once, never throws. Called when the
   * program is warm (the server listening), so the cache holds the functions a start runs.
   */
  saveCache(): void;
}

export interface LoadOptions {
  /** Write the cache this long after loading (if nothing called `saveCache` before). */
  saveAfterMs?: number;
}

/** How Node wraps a CommonJS module; kept on the first line so line numbers match the file. */
const WRAP_HEAD = '(function (exports, require, module, __filename, __dirname) {';

export function loadBundle(url: URL, build: string, opts: LoadOptions = {}): LoadedBundle {
  const file = fileURLToPath(url);
  // V8 refuses a cache made under other flags (`--cpu-prof`…): such runs keep one of their own.
  const flags = process.execArgv.length > 0 ? `-${fnv1a(process.execArgv.join(' '))}` : '';
  const cacheFile = `${file}.${build}.v8-${process.versions.v8}-${process.arch}${flags}.cache`;
  const cachedData = readIfThere(cacheFile);
  const script = new vm.Script(`${WRAP_HEAD}${readSource(file)}\n})`, {
    filename: file,
    columnOffset: -WRAP_HEAD.length,
    ...(cachedData ? { cachedData } : {}),
    // `import()` left in the bundle (Node built-ins, optional packages) resolves as in a module.
    importModuleDynamically: vm.constants.USE_MAIN_CONTEXT_DEFAULT_LOADER,
  });
  const module = { exports: {} as Record<string, unknown> };
  const init = script.runInThisContext() as (...args: unknown[]) => void;
  init.call(module.exports, module.exports, createRequire(file), module, file, dirname(file));

  const fromCache = cachedData !== undefined && !script.cachedDataRejected;
  let pending = !fromCache;
  const saveCache = () => {
    if (!pending) return;
    pending = false;
    const tmp = `${cacheFile}.${process.pid}.tmp`;
    try {
      // Written whole, then renamed: a process starting meanwhile reads the old file or the new.
      writeFileSync(tmp, script.createCachedData(), { mode: 0o644 });
      renameSync(tmp, cacheFile);
    } catch {
      rmSync(tmp, { force: true });
    }
  };
  if (pending && opts.saveAfterMs !== undefined) setTimeout(saveCache, opts.saveAfterMs).unref();
  return { exports: module.exports, fromCache, saveCache };
}

/**
 * The build writes the bundles as ASCII, read here as Latin-1: a one-byte string made in a
 * copy, where UTF-8 decoding took 25–65 ms for the server's 7 MB. Anything else is UTF-8.
 */
function readSource(path: string): string {
  const bytes = readFileSync(path);
  return bytes.toString(isAscii(bytes) ? 'latin1' : 'utf8');
}

function readIfThere(path: string): Buffer | undefined {
  try {
    return readFileSync(path);
  } catch {
    return undefined;
  }
}

/** A short, stable name for a string (FNV-1a, 32 bits). */
function fnv1a(text: string): string {
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) h = Math.imul(h ^ text.charCodeAt(i), 0x01000193);
  return (h >>> 0).toString(16);
}
