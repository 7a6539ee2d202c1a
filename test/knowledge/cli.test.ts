/**
 * The knowledge and workpad commands as an operator types them: the real CLI
 * (`bin/warren.js`) against a real server process.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { binEnv, WARREN_BIN } from '../helpers/server.ts';
import { type LiveServer, liveServer, type Run } from '../orchestration/live-server.ts';

describe('warren knowledge … / workpad … (CLI)', () => {
  let live: LiveServer;
  const ok = (...args: string[]) => live.ok(...args);
  /** `warren <args>` with `input` on its stdin. */
  const piped = (input: string, ...args: string[]) =>
    new Promise<Run>((resolve, reject) => {
      const child = execFile(
        process.execPath,
        [WARREN_BIN, ...args, '--url', live.server.url, '--data-dir', live.dataDir],
        { env: { ...process.env, ...binEnv() }, timeout: 20_000 },
        (error, stdout, stderr) => {
          if (error && typeof error.code !== 'number') return reject(error);
          resolve({ code: typeof error?.code === 'number' ? error.code : 0, stdout, stderr });
        },
      );
      child.stdin?.end(input);
    });

  before(async () => {
    live = await liveServer();
  });
  after(async () => {
    await live?.stop();
  });

  it('knowledge post, search, show', async () => {
    const posted = JSON.parse(
      await ok(
        'knowledge',
        'post',
        'cold cache',
        '--body',
        'first requests take 2 s',
        '--tags',
        '["perf"]',
        '--json',
      ),
    );
    assert.deepEqual(posted.finding.tags, ['perf']);
    const found = JSON.parse(await ok('knowledge', 'search', 'caches "cold', '--json'));
    assert.deepEqual(
      found.findings.map((f: { id: string }) => f.id),
      [posted.finding.id],
    );
    assert.match(await ok('knowledge', 'search', 'cold'), /cold cache/);
    assert.match(await ok('knowledge', 'show', posted.finding.id), /first requests take 2 s/);
    const missing = await live.cli('knowledge', 'show', 'fnd_nope');
    assert.notEqual(missing.code, 0);
    assert.match(missing.stderr, /does not exist/);
  });

  it('workpad show and edit (stdin, --file, --version conflict)', async () => {
    const task = JSON.parse(await ok('task', 'create', 'pad', '--prompt', 'p', '--hold', '--json')).task.id;
    const empty = JSON.parse(await ok('workpad', 'show', task, '--json'));
    assert.equal(empty.workpad.version, 0);

    const first = await piped('# plan\n- one\n', 'workpad', 'edit', task);
    assert.equal(first.code, 0, first.stderr);
    assert.match(first.stdout, /version 1 \(13 bytes\)/);
    const file = join(live.dataDir, 'pad.md');
    writeFileSync(file, '# plan\n- one\n- two\n');
    assert.match(await ok('workpad', 'edit', task, '--file', file, '--version', '1'), /version 2/);
    const shown = JSON.parse(await ok('workpad', 'show', task, '--json'));
    assert.equal(shown.workpad.body, '# plan\n- one\n- two\n');

    const stale = await live.cli('workpad', 'edit', task, '--file', file, '--version', '1');
    assert.notEqual(stale.code, 0);
    assert.match(stale.stderr, /at version 2, not 1/);
    const noFile = await live.cli('workpad', 'edit', task, '--file', join(live.dataDir, 'nope.md'));
    assert.equal(noFile.code, 2);
  });
});
