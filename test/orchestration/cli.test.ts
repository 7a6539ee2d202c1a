/**
 * The task commands as an operator types them: the real CLI (`bin/warren.js`) against a real
 * server process.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { until } from '../helpers/warrens.ts';
import { type LiveServer, liveServer } from './live-server.ts';

describe('warren task … (CLI)', () => {
  let live: LiveServer;
  const warren = (...args: string[]) => live.cli(...args);
  const ok = (...args: string[]) => live.ok(...args);

  before(async () => {
    live = await liveServer();
  });
  after(async () => {
    await live?.stop();
  });

  it('create, list, tree, show, cancel, delete', async () => {
    const spawn = JSON.stringify({ script: { steps: [{ say: 'built' }] } });
    const parent = JSON.parse(
      await ok(
        'task',
        'create',
        'release',
        '--prompt',
        'ship it',
        '--hold',
        '--spawn',
        JSON.stringify({ script: { steps: [{ listen: {} }] } }),
        '--json',
      ),
    );
    const kid = JSON.parse(
      await ok(
        'task',
        'create',
        'build',
        '--prompt',
        'build it',
        '--parent',
        parent.task.id,
        '--spawn',
        spawn,
        '--json',
      ),
    );
    assert.equal(kid.task.parentId, parent.task.id);
    const tree = await ok('task', 'tree');
    const lines = tree.trimEnd().split('\n');
    assert.match(lines[0]!, /^root {2}root {2}\[running\]/);
    assert.match(lines[1]!, new RegExp(`^└─ ${parent.task.id} {2}release {2}\\[pending \\(held\\)\\]`));
    assert.match(lines[2]!, new RegExp(`^ {3}└─ ${kid.task.id} {2}build {2}\\[pending\\]`));
    assert.match(await ok('task', 'show', kid.task.id), /waiting for parent task/);
    await ok('task', 'start', parent.task.id);
    await until(async () => /result +built/.test(await ok('task', 'show', kid.task.id)), 15_000);
    const list = await ok('task', 'list', '--status', 'complete');
    assert.match(list, /^ID +Title +Status/);
    assert.match(list, new RegExp(`${kid.task.id} +build +complete`));
    const refused = await warren('task', 'delete', parent.task.id);
    assert.equal(refused.code, 1);
    assert.match(refused.stderr, /has_children/);
    await ok('task', 'cancel', parent.task.id);
    assert.match(await ok('task', 'show', parent.task.id), /status +cancelled/);
  });
});
