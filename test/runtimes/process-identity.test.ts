import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { bootId, isSameProcess, killRecordedGroup, processStartTime } from '../../src/runtimes/process.ts';
import { gone } from '../helpers/processes.ts';
import { eventually, killAll, tagged } from './process-tagged.ts';

/** A process's identity across pid reuse: its pid plus its start time (and the boot). */
const dir = mkdtempSync(join(tmpdir(), 'warren-identity-'));
const children: ChildProcess[] = [];
const tags: string[] = [];
after(() => {
  for (const c of children) {
    try {
      process.kill(-c.pid!, 'SIGKILL');
    } catch {}
  }
  for (const t of tags) killAll(tagged(t));
  rmSync(dir, { recursive: true, force: true });
});

function start(cmd: string, args: string[]): ChildProcess {
  const tag = randomUUID();
  tags.push(tag);
  const c = spawn(cmd, args, { detached: true, stdio: 'ignore', env: { ...process.env, TEST_TAG: tag } });
  children.push(c);
  return c;
}

describe('process identity', () => {
  it('reads field 22 even when the command name holds spaces and parentheses', () => {
    const odd = join(dir, 'a) b (c) d');
    symlinkSync('/bin/sleep', odd);
    const plain = start('/bin/sleep', ['1000']);
    const weird = start(odd, ['1000']);
    const a = processStartTime(plain.pid!);
    const b = processStartTime(weird.pid!);
    assert.match(a ?? '', /^\d+$/);
    assert.match(b ?? '', /^\d+$/);
    // Started within a moment of each other: within a second of clock ticks.
    assert.ok(Math.abs(Number(a) - Number(b)) < 100, `${a} vs ${b}`);
    assert.equal(processStartTime(weird.pid!), b, 'stable');
  });

  it('is null for a process that is gone, and for nonsense', async () => {
    const c = start('/bin/true', []);
    await new Promise((r) => c.once('exit', r));
    assert.ok(await eventually(() => processStartTime(c.pid!) === null, 2000));
    assert.equal(processStartTime(-1), null);
    assert.equal(processStartTime(0), null);
    assert.equal(processStartTime(1.5), null);
  });

  it('bootId is this boot', () => {
    assert.match(bootId() ?? '', /^[0-9a-f-]{36}$/);
  });

  it('isSameProcess tells the recorded process from a pid reused by another', async () => {
    const c = start('/bin/sleep', ['1000']);
    const rec = { pid: c.pid!, startTime: processStartTime(c.pid!)! };
    assert.equal(isSameProcess(rec), true);
    assert.equal(isSameProcess({ ...rec, startTime: String(Number(rec.startTime) + 1) }), false);
    assert.equal(isSameProcess({ ...rec, bootId: randomUUID() }), false, 'another boot');
    assert.equal(isSameProcess({ ...rec, bootId: bootId() }), true);
    c.kill('SIGKILL');
    await new Promise((r) => c.once('exit', r));
    assert.equal(isSameProcess(rec), false);
  });

  it('killRecordedGroup ends the group only while its leader is the recorded process', async () => {
    const c = start('bash', ['-c', 'sleep 1000 & sleep 1000']);
    const tag = tags.at(-1)!;
    assert.ok(await eventually(() => tagged(tag).length === 3, 5000));
    const rec = { pid: c.pid!, pgid: c.pid!, startTime: processStartTime(c.pid!)! };
    assert.equal(killRecordedGroup({ ...rec, startTime: '1' }), false, 'a reused pid is left alone');
    assert.equal(tagged(tag).length, 3);
    assert.equal(killRecordedGroup(rec), true);
    assert.ok(await eventually(() => tagged(tag).length === 0 && gone(c.pid!), 2000));
    assert.equal(killRecordedGroup(rec), false, 'nothing left to end');
  });
});
