/**
 * The shipped build (dist/, `npm run build`; `npm test` builds first): it matches the
 * sources, finds its files from dist/ as the sources do from src/, and a client command run
 * from it loads client code only.
 */
import assert from 'node:assert/strict';
import { isAscii } from 'node:buffer';
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { DEMO_SCRIPT } from '../../src/app/demo.ts';
import { syscallSpecs } from '../../src/surfaces/cli/manifest.ts';
import { REFERENCE_PATH } from '../../src/surfaces/docs/write.ts';
import { allSyscalls } from '../../src/syscalls/table.ts';
import { binEnv, WARREN_BIN } from '../helpers/server.ts';
import { fakeServer } from './helpers.ts';

const dist = (path: string) => new URL(`../../dist/${path}`, import.meta.url);
const current = existsSync(dist('main.js')) && binEnv().WARREN_FROM_SOURCE === undefined;
const skip = current ? false : 'dist/ is missing or older than src/ (npm run build)';

/** Records every module a child resolves, through a loader hook; the child's own output is kept. */
const RECORD_HOOK = `data:text/javascript,${encodeURIComponent(`
import { register } from 'node:module';
register('data:text/javascript,' + encodeURIComponent(
  'export async function resolve(s, c, next) { const r = await next(s, c); process.stderr.write("loaded " + r.url + "\\\\n"); return r; }'
));`)}`;

function loadedBy(args: string[], env: Record<string, string> = {}): Promise<string[]> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--import', RECORD_HOOK, WARREN_BIN, ...args],
      { env: { ...process.env, ...env }, timeout: 20_000 },
      (error, _stdout, stderr) => {
        if (error) return reject(new Error(`${error.message}\n${stderr}`));
        resolve(
          stderr
            .split('\n')
            .filter((l) => l.startsWith('loaded '))
            .map((l) => l.slice('loaded '.length)),
        );
      },
    );
  });
}

const SERVER_SIDE =
  /node_modules\/(zod|fastify|better-sqlite3|pg|kysely|@modelcontextprotocol|@agentclientprotocol|yaml)\/|\/dist\/(kernel|store|runtimes|syscalls|app\/server|surfaces\/(http|mcp))/;

describe('the build', { skip }, () => {
  it('ships the CLI manifest the syscall table gives', () => {
    const shipped = JSON.parse(readFileSync(dist('surfaces/cli/manifest.json'), 'utf8'));
    assert.deepEqual(shipped, JSON.parse(JSON.stringify(syscallSpecs(allSyscalls))));
  });

  it('finds examples/ and docs/ from dist/ as from src/', async () => {
    const demo = (await import(dist('app/demo.js').href)) as { DEMO_SCRIPT: string };
    const docs = (await import(dist('surfaces/docs/write.js').href)) as { REFERENCE_PATH: string };
    assert.equal(demo.DEMO_SCRIPT, DEMO_SCRIPT);
    assert.equal(docs.REFERENCE_PATH, REFERENCE_PATH);
    assert.ok(existsSync(demo.DEMO_SCRIPT));
  });

  it('bundles the server and the mcp relay as ASCII CommonJS behind an ES module (scripts/bundle-server.mjs)', async () => {
    for (const out of ['app/server', 'surfaces/cli/mcp-bridge']) {
      assert.ok(isAscii(readFileSync(dist(`${out}.cjs`))), `${out}.cjs is ASCII`);
      assert.match(
        readFileSync(dist(`${out}.js`), 'utf8'),
        /loadBundle\(new URL\('\.\/[\w-]+\.cjs', import\.meta\.url\)/,
      );
    }
    const server = (await import(dist('app/server.js').href)) as Record<string, unknown>;
    for (const name of ['serve', 'Warren', 'loadConfig', 'ConfigError']) {
      assert.equal(typeof server[name], 'function', name);
    }
  });

  it('warren --help loads client code only', async () => {
    const loaded = await loadedBy(['--help']);
    assert.ok(
      loaded.some((u) => u.endsWith('/dist/surfaces/cli/main.js')),
      loaded.join('\n'),
    );
    assert.deepEqual(
      loaded.filter((u) => SERVER_SIDE.test(u)),
      [],
    );
  });

  it('warren ps loads client code only', async () => {
    const server = await fakeServer(() => ({ status: 200, body: { sessions: [] } }));
    try {
      const loaded = await loadedBy(['ps'], { WARREN_URL: server.url, WARREN_API_KEY: 'k' });
      assert.ok(
        loaded.some((u) => u.endsWith('/dist/surfaces/cli/client.js')),
        loaded.join('\n'),
      );
      assert.deepEqual(
        loaded.filter((u) => SERVER_SIDE.test(u)),
        [],
      );
      assert.equal(server.requests.length, 1);
    } finally {
      await server.close();
    }
  });

  it('bin/warren.js falls back to the sources, saying so, when asked', async () => {
    const out = await new Promise<{ stdout: string; stderr: string }>((resolve, reject) =>
      execFile(
        process.execPath,
        [fileURLToPath(new URL('../../bin/warren.js', import.meta.url)), '--help'],
        { env: { ...process.env, WARREN_FROM_SOURCE: '1' }, timeout: 60_000 },
        (error, stdout, stderr) => (error ? reject(error) : resolve({ stdout, stderr })),
      ),
    );
    assert.match(out.stdout, /^warren — an agent kernel/);
    assert.equal(out.stderr, '', 'WARREN_FROM_SOURCE=1 is a choice: no notice');
  });
});
