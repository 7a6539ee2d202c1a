import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, rmSync, utimesSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { cgroupBases, removeStaleCgroups } from '../../src/runtimes/process/cgroup.ts';

/** Cgroups a dead server could not remove are removed later, and only those. */
const base = mkdtempSync(join(tmpdir(), 'warren-cgroup-'));
after(() => rmSync(base, { recursive: true, force: true }));

describe('agent cgroups', () => {
  it('finds where this process may make them (v2 first), or nothing off Linux', () => {
    const bases = cgroupBases();
    if (existsSync('/proc/self/cgroup')) assert.ok(bases.length > 0);
    for (const b of bases) assert.ok(existsSync(b.dir), b.dir);
  });

  it('removeStaleCgroups removes empty, old warren cgroups only', async () => {
    const old = new Date(Date.now() - 3_600_000);
    for (const name of ['warren-a.1', 'warren-b.2', 'warren-c.3', 'other']) mkdirSync(join(base, name));
    writeFileSync(join(base, 'warren-c.3', 'cgroup.procs'), '4242\n'); // populated
    for (const name of ['warren-a.1', 'warren-c.3', 'other']) utimesSync(join(base, name), old, old);
    const removed = await removeStaleCgroups(60_000, [{ version: 2, dir: base }]);
    assert.equal(removed, 1);
    assert.ok(!existsSync(join(base, 'warren-a.1')), 'empty and old: removed');
    assert.ok(existsSync(join(base, 'warren-b.2')), 'just made: kept');
    assert.ok(existsSync(join(base, 'warren-c.3')), 'populated: kept');
    assert.ok(existsSync(join(base, 'other')), 'not ours: kept');
  });
});
