import assert from 'node:assert/strict';
import { it } from 'node:test';
import { mayActOn } from '../../src/plugins/orchestration/access.ts';
import type { Db } from '../../src/plugins/orchestration/schema.ts';
import { taskById } from '../../src/plugins/orchestration/tasks.ts';
import type { Warren } from '../../src/syscalls/warren.ts';
import type { Principal } from '../../src/vocab/principal.ts';
import { asSession, call, forEachWarren } from '../helpers/warrens.ts';
import { create, fails, listens, says, task, waitTask } from './helpers.ts';

/**
 * Who may act on a task (docs/orchestration.md, "Who may do what"): an operator, every
 * task of its zone; a session, its subtree — the tasks it made at the top of the tree and what
 * lies below them, its own task (it is that task's session) and what lies below it — and
 * nothing else, at any depth.
 */

const ids = (tasks: Array<{ id: string }>) => tasks.map((x) => x.id).sort();
const listOf = async (w: Warren, who: Principal) => ids((await call(w, 'task_list', {}, who)).tasks);
const readerOf = (w: Warren): Db => w.plugins.get<{ tables: { reader: Db } }>('orchestration').tables.reader;

forEachWarren('tasks: who may act on which task', (t) => {
  it('a session acts on what it made at the top and below, and on its own task and below; on nothing else', async () => {
    const w = await t.open();
    // S is no task's session: its tasks start at the top of the tree.
    const S = asSession((await call(w, 'ipc_spawn', listens)).session.id);
    const top = await create(w, { title: 'S top', hold: true, spawn: says('t') }, S);
    const below = await create(w, { title: 'S below', parent: top.id, hold: true, spawn: says('b') }, S);
    const deeper = await create(w, { title: 'S deeper', parent: below.id, hold: true, spawn: says('d') }, S);
    // X is the session of a task the operator made: its new tasks go under that task.
    const T = await create(w, { title: 'operator’s running task', spawn: listens });
    const X = asSession((await waitTask(w, T.id, 'running')).sessionId);
    const sub = await create(w, { title: 'X sub', hold: true, spawn: says('x') }, X);
    assert.equal(sub.parentId, T.id);
    const subsub = await create(w, { title: 'X subsub', parent: sub.id, hold: true, spawn: says('y') }, X);
    const held = await create(w, { title: 'operator’s held task', hold: true });

    for (const x of [top, below, deeper]) assert.equal((await task(w, x.id, S)).id, x.id);
    for (const x of [T, sub, subsub]) assert.equal((await task(w, x.id, X)).id, x.id);
    for (const x of [T, sub, subsub, held]) await fails(task(w, x.id, S), 'forbidden', /subtree/);
    for (const x of [top, below, deeper, held]) await fails(task(w, x.id, X), 'forbidden', /subtree/);
    assert.deepEqual(await listOf(w, S), ids([top, below, deeper]));
    assert.deepEqual(await listOf(w, X), ids([T, sub, subsub]));
    // Acting, not only seeing.
    await fails(call(w, 'task_cancel', { id: deeper.id }, X), 'forbidden');
    await fails(call(w, 'task_cancel', { id: subsub.id }, S), 'forbidden');
    await call(w, 'task_cancel', { id: deeper.id }, S);
    await call(w, 'task_cancel', { id: subsub.id }, X);
  });

  it('keeps to the zone, and no session acts on the root', async () => {
    const w = await t.open();
    const S = asSession((await call(w, 'ipc_spawn', listens)).session.id);
    const made = await create(w, { title: 'top', hold: true, spawn: says('t') }, S);
    const db = readerOf(w);
    const row = (await taskById(db, made.id))!;
    const root = (await taskById(db, made.parentId))!;
    const operator = (zone: string): Principal => ({ kind: 'operator', name: 'admin', zone });
    assert.equal(await mayActOn(db, operator('default'), row), true);
    assert.equal(await mayActOn(db, S, row), true);
    // The syscalls look a task up in the caller's zone first; the check holds on its own too.
    assert.equal(await mayActOn(db, operator('elsewhere'), row), false);
    assert.equal(await mayActOn(db, { ...S, zone: 'elsewhere' }, row), false);
    // The root is the tree's init, whichever session it names.
    assert.equal(await mayActOn(db, S, root), false);
    if (root.session_id) assert.equal(await mayActOn(db, asSession(root.session_id), row), false);
  });

  it('a task adopted out of a session’s subtree is no longer the session’s', async () => {
    const w = await t.open();
    const g = await create(w, { title: 'grandparent', spawn: listens });
    await waitTask(w, g.id, 'running');
    // Its session is a grandchild of init (depth 2): the task tools are granted to it by name.
    const p = await create(w, {
      title: 'parent',
      parent: g.id,
      spawn: { ...listens, toolGroups: ['tasks'] },
    });
    const X = asSession((await waitTask(w, p.id, 'running')).sessionId, 2);
    const sub = await create(w, { title: 'made by X', hold: true, spawn: says('s') }, X);
    assert.equal(sub.parentId, p.id);
    const db = readerOf(w);
    assert.equal(await mayActOn(db, X, (await taskById(db, sub.id))!), true);
    // Its own task, seen from another zone: the session's id alone does not carry it across.
    assert.equal(await mayActOn(db, { ...X, zone: 'elsewhere' }, (await taskById(db, p.id))!), false);
    // The parent completes; its open child goes to the grandparent, out of X's subtree.
    await call(w, 'task_complete', { id: p.id, result: 'done' });
    const moved = (await taskById(db, sub.id))!;
    assert.equal(moved.parent_id, g.id);
    assert.equal(await mayActOn(db, X, moved), false, 'made by X, but no longer below its task');
  });
});
