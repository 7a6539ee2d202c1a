import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { it } from 'node:test';
import { processStartTime } from '../../src/runtimes/proc-start.ts';

it('a process start time is field 22 of /proc/<pid>/stat: later processes start later; gone ones have none', async () => {
  const mine = processStartTime(process.pid);
  assert.match(String(mine), /^\d+$/);
  // A command name (from the executable's file name) with spaces and a ')' must not shift the fields.
  const dir = mkdtempSync(join(tmpdir(), 'warren-proc-'));
  const odd = join(dir, 'odd ) n a m e');
  symlinkSync('/bin/sleep', odd);
  const child = spawn(odd, ['30'], { stdio: 'ignore' });
  try {
    await new Promise((r) => setTimeout(r, 200));
    const theirs = processStartTime(child.pid!);
    assert.match(String(theirs), /^\d+$/);
    assert.ok(BigInt(theirs!) >= BigInt(mine!));
  } finally {
    child.kill('SIGKILL');
    await new Promise((r) => child.once('exit', r));
    rmSync(dir, { recursive: true, force: true });
  }
  assert.equal(processStartTime(2 ** 22 + 12345), null);
});
