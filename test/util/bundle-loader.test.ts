/**
 * The loader of the build's CommonJS bundles (src/util/bundle-loader.ts): a module's
 * semantics (exports, require, __filename, import()), and V8's code cache written beside the
 * bundle, read back by the same build only.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { pathToFileURL } from 'node:url';
import { loadBundle } from '../../src/util/bundle-loader.ts';

const dir = mkdtempSync(join(tmpdir(), 'warren-bundle-loader-'));
after(() => rmSync(dir, { recursive: true, force: true }));

const BUNDLE = `
exports.file = __filename;
exports.dir = __dirname;
exports.sep = require('node:path').sep;
exports.self = this === exports;
exports.platform = () => import('node:os').then((os) => os.platform());
exports.text = 'caf\\u00e9';
`;

function bundleAt(name: string, code: string): URL {
  const file = join(dir, name);
  writeFileSync(file, code);
  return pathToFileURL(file);
}

const caches = (name: string) =>
  readdirSync(dir).filter((f) => f.startsWith(`${name}.`) && f.endsWith('.cache'));

describe('loadBundle', () => {
  it('runs the bundle as a CommonJS module', async () => {
    const url = bundleAt('a.cjs', BUNDLE);
    const { exports } = loadBundle(url, 'build1');
    assert.equal(exports.file, join(dir, 'a.cjs'));
    assert.equal(exports.dir, dir);
    assert.equal(exports.sep, '/');
    assert.equal(exports.self, true);
    assert.equal(exports.text, 'café');
    assert.equal(await (exports.platform as () => Promise<string>)(), process.platform);
  });

  it('writes the code cache once warm and compiles from it next time, for the same build only', () => {
    const url = bundleAt('b.cjs', BUNDLE);
    const first = loadBundle(url, 'build1');
    assert.equal(first.fromCache, false);
    assert.deepEqual(caches('b.cjs'), []);
    first.saveCache();
    assert.equal(caches('b.cjs').length, 1);
    assert.match(
      caches('b.cjs')[0]!,
      new RegExp(`^b\\.cjs\\.build1\\.v8-.+-${process.arch}(-[0-9a-f]+)?\\.cache$`),
    );

    const second = loadBundle(url, 'build1');
    assert.equal(second.fromCache, true);
    assert.equal(second.exports.text, 'café');
    second.saveCache(); // nothing to do: it came from the cache

    const rebuilt = loadBundle(url, 'build2');
    assert.equal(rebuilt.fromCache, false, "another build's cache is never read");
  });

  it('reads a bundle that is not ASCII as UTF-8', () => {
    const url = bundleAt('c.cjs', "exports.text = 'naïve — µs';");
    assert.equal(loadBundle(url, 'build1').exports.text, 'naïve — µs');
  });

  it("a cache that cannot be written is no error (the bundle's directory is gone)", () => {
    const url = bundleAt('d.cjs', BUNDLE);
    const loaded = loadBundle(url, 'build1');
    rmSync(dir, { recursive: true, force: true });
    loaded.saveCache(); // must not throw
    assert.equal(existsSync(dir), false);
  });
});
