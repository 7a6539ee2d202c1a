/**
 * `npm test`'s shards (scripts/test.mjs, test/helpers/shard.ts): several files in one process,
 * each still its own suite. Played with real test files in a temp dir, run by the real runner.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const RUNNER = fileURLToPath(new URL('../../scripts/test.mjs', import.meta.url));

/** A test file that logs its hooks and test to `log`, and waits on a shared top-level await. */
const file = (name: string, log: string, body = '') => `
import { appendFileSync } from 'node:fs';
import { after, before, it } from 'node:test';
import { ready } from './shared.ts';
const say = (what: string) => appendFileSync(${JSON.stringify(log)}, '${name} ' + what + '\\n');
before(() => say('before'));
after(() => say('after'));
it('${name} runs', async () => { await ready; say('test'); });
${body}
`;

/** As a shell would start it: node:test refuses to start a run from inside a test's process. */
function runnerEnv(durations: string): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    WARREN_TEST_CONCURRENCY: '1',
    WARREN_TEST_DURATIONS: durations,
  };
  delete env.NODE_TEST_CONTEXT;
  return env;
}

describe('npm test in shards', () => {
  let dir: string;
  let log: string;
  let run: ReturnType<typeof spawnSync>;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'warren-shards-test-'));
    log = join(dir, 'order.log');
    writeFileSync(log, '');
    writeFileSync(join(dir, 'package.json'), '{ "type": "module" }\n');
    // What made node:test place a file's tests in another's suite: both wait on this.
    writeFileSync(
      join(dir, 'shared.ts'),
      'export const ready = Promise.resolve();\nawait new Promise((r) => setTimeout(r, 50));\n',
    );
    writeFileSync(join(dir, 'a.test.ts'), file('a', log));
    writeFileSync(
      join(dir, 'b.test.ts'),
      file('b', log, "it('b fails', () => { throw new Error('b is broken'); });"),
    );
    writeFileSync(join(dir, 'c.test.ts'), 'this is not typescript (\n');
    writeFileSync(join(dir, 'd.test.ts'), file('d', log));
    run = spawnSync(
      process.execPath,
      [RUNNER, '--durations', ...['a', 'b', 'c', 'd'].map((n) => join(dir, `${n}.test.ts`))],
      { encoding: 'utf8', env: runnerEnv(join(dir, 'durations.json')), timeout: 120_000 },
    );
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("a file's top-level hooks run around its own tests, one file after another", () => {
    assert.deepEqual(readFileSync(log, 'utf8').trim().split('\n'), [
      'a before',
      'a test',
      'a after',
      'b before',
      'b test',
      'b after',
      'd before',
      'd test',
      'd after',
    ]);
  });

  it('each test is reported in the suite of its file; a file that does not load fails as one test', () => {
    const out = String(run.stdout);
    assert.equal(run.status, 1, 'a failure fails the run');
    assert.match(out, /^# tests 5$/m, 'a, b ×2, the load of c, d: each once');
    assert.match(out, /^# fail 2$/m);
    for (const n of ['a', 'd'])
      assert.match(out, new RegExp(`# Subtest: [^\\n]*${n}\\.test\\.ts\\n    # Subtest: ${n} runs`));
    assert.match(out, /# Subtest: [^\n]*c\.test\.ts\n {4}# Subtest: loads\n {4}not ok 1 - loads/);
  });

  it('the failures are listed again after the summary, with their errors, whose stacks name the file', () => {
    const out = String(run.stdout);
    const digest = out.slice(out.lastIndexOf('# duration_ms'));
    assert.match(digest, /# 2 failed:/);
    assert.match(digest, /# ✗ b fails\n[\s\S]*b is broken[\s\S]*b\.test\.ts/);
    assert.match(digest, /# ✗ loads\n[\s\S]*c\.test\.ts/);
  });

  it('--durations records each file’s time, measured inside its shard', () => {
    const took = JSON.parse(readFileSync(join(dir, 'durations.json'), 'utf8')) as Record<string, number>;
    const files = Object.keys(took).map((f) => f.split('/').pop());
    assert.deepEqual(files.sort(), ['a.test.ts', 'b.test.ts', 'c.test.ts', 'd.test.ts']);
    for (const s of Object.values(took)) assert.ok(Number.isFinite(s) && s >= 0, String(s));
  });

  it('a file that hangs is cut off at its own bound, its after hooks run, and the next file still runs', () => {
    const log2 = join(dir, 'hang.log');
    writeFileSync(log2, '');
    writeFileSync(
      join(dir, 'e.test.ts'),
      `import { appendFileSync } from 'node:fs';
import { after, it } from 'node:test';
// It hangs holding a handle (as on a socket that never answers), which its after hook closes.
const held = setInterval(() => {}, 1000);
after(() => {
  clearInterval(held);
  appendFileSync(${JSON.stringify(log2)}, 'e after\\n');
});
it('e hangs', () => new Promise(() => {}));
`,
    );
    writeFileSync(join(dir, 'f.test.ts'), file('f', log2));
    const hung = spawnSync(process.execPath, [RUNNER, join(dir, 'e.test.ts'), join(dir, 'f.test.ts')], {
      encoding: 'utf8',
      env: { ...runnerEnv(join(dir, 'durations-2.json')), WARREN_TEST_FILE_TIMEOUT_MS: '1000' },
      timeout: 120_000,
    });
    assert.equal(hung.status, 1);
    assert.match(String(hung.stdout), /timed out after 1000ms/);
    assert.deepEqual(readFileSync(log2, 'utf8').trim().split('\n'), [
      'e after',
      'f before',
      'f test',
      'f after',
    ]);
  });
});
