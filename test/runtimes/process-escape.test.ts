import assert from 'node:assert/strict';
import type { ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { after, describe, it } from 'node:test';
import { agentGroup, killGroup, killRun, onLines, spawnGroup } from '../../src/runtimes/process.ts';
import { gone } from '../helpers/processes.ts';
import { eventually, killAll, tagged } from './process-tagged.ts';

/**
 * The attack (issue 7): an agent leaves a `setsid` grandchild, which is outside its process
 * group, and may hold its stdout open. killGroup must end it all, and return in bounded time.
 * (Counts of tagged processes include the lifeline's watcher, which carries the tag too.)
 */
const RUN = `escape${process.pid}`;
const started: Array<{ child: ChildProcess; tag: string }> = [];
const extraPids: number[] = [];
after(async () => {
  for (const { child, tag } of started) {
    child.kill('SIGKILL');
    killAll(tagged(tag));
  }
  killAll(extraPids);
  await killRun(RUN);
});

/** Start `script` under bash as an agent; resolves once it printed `ready` (its first line). */
async function agent(script: string): Promise<{ child: ChildProcess; tag: string; lines: string[] }> {
  const tag = randomUUID();
  const child = spawnGroup('bash', ['-c', script], { env: { ...process.env, TEST_TAG: tag }, run: RUN });
  started.push({ child, tag });
  const lines: string[] = [];
  await new Promise<void>((ok, fail) => {
    const timer = setTimeout(() => fail(new Error(`no "ready" from: ${script}`)), 10_000);
    onLines(child.stdout!, (line) => {
      lines.push(line);
      if (line.startsWith('ready')) {
        clearTimeout(timer);
        ok();
      }
    });
  });
  return { child, tag, lines };
}

/** Fail if `p` has not settled within `ms`: a bound for a call that hangs, not a measure of its speed. */
async function returns<T>(p: Promise<T>, ms: number, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      p,
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`${what} did not return in ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
  }
}

describe('descendants that leave the process group', () => {
  it('a setsid grandchild does not survive killGroup', async () => {
    const { child, tag } = await agent('setsid sleep 1000 & echo ready; exec sleep 1000');
    assert.ok(tagged(tag).length >= 2, 'the agent and its grandchild run');
    await killGroup(child, 500);
    assert.ok(await eventually(() => tagged(tag).length === 0, 1000), `alive: ${tagged(tag).join(', ')}`);
  });

  it('a setsid grandchild holding stdout: killGroup returns in bounded time and ends it', async () => {
    const { child, tag } = await agent(
      `trap '' TERM; setsid sh -c "trap '' TERM; sleep 1000" & echo ready; sleep 1000`,
    );
    const stdoutClosed = new Promise<void>((r) => child.stdout!.once('close', () => r()));
    // Bounded whatever the grandchild does with the pipe it holds (a hang would wait for it:
    // it sleeps 1,000 s). A bound for a hung call, not a measure of its speed.
    await returns(killGroup(child, 500), 20_000, 'killGroup');
    assert.ok(await eventually(() => tagged(tag).length === 0, 1000), `alive: ${tagged(tag).join(', ')}`);
    await stdoutClosed; // no one waiting on 'close' waits forever
  });

  it('an agent that exits on its own leaves nothing behind', async () => {
    const { child, tag } = await agent('setsid sleep 1000 & echo ready; exit 0');
    assert.ok(await eventually(() => child.exitCode !== null, 5000));
    assert.ok(await eventually(() => tagged(tag).length === 0, 3000), `alive: ${tagged(tag).join(', ')}`);
  });

  it('with a cgroup, even a grandchild that drops its environment is held', async (t) => {
    const { child, lines } = await agent('setsid env -i sleep 1000 & echo ready $!; exec sleep 1000');
    const cgroup = agentGroup(child)?.cgroup;
    if (!cgroup) return t.skip('no writable cgroup here');
    const pid = Number(lines[0]!.split(' ')[1]);
    extraPids.push(pid);
    assert.ok(!gone(pid));
    await killGroup(child, 500);
    assert.ok(await eventually(() => gone(pid), 1000), `${pid} survived`);
    assert.ok(await eventually(() => !existsSync(cgroup), 5000), `${cgroup} was not removed`);
  });

  it("killRun ends every process of a run, a crashed run's survivors included", async () => {
    const run = `sweep${process.pid}`;
    const tag = randomUUID();
    const child = spawnGroup('bash', ['-c', 'setsid sleep 1000 & setsid sleep 1000 & exec sleep 1000'], {
      env: { ...process.env, TEST_TAG: tag },
      run,
    });
    started.push({ child, tag });
    assert.ok(await eventually(() => tagged(tag).length >= 3, 5000));
    const sent = await killRun(run);
    assert.ok(sent >= 3, `signalled ${sent}`);
    assert.ok(await eventually(() => tagged(tag).length === 0, 1000), `alive: ${tagged(tag).join(', ')}`);
  });
});
