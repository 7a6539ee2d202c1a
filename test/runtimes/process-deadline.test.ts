import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, describe, it } from 'node:test';
import { killGroup, killRun, LifelineDeadline, spawnGroup } from '../../src/runtimes/process.ts';
import { systemClock } from '../../src/util/clock.ts';
import { eventually, killAll, tagged } from './process-tagged.ts';

/**
 * The lifeline's deadline (lifeline.ts, deadline.ts): a server that beats its agents' lifelines
 * keeps them; one that stops beating — paused by SIGSTOP, its pipe still open — has them ended
 * by their own watchers, with nothing else killing them. Without a deadline nothing changes.
 */
const PROCESS_TS = resolve(import.meta.dirname, '../../src/runtimes/process.ts');
const CLOCK_TS = resolve(import.meta.dirname, '../../src/util/clock.ts');
const dir = mkdtempSync(join(tmpdir(), 'warren-deadline-'));
const parentFile = join(dir, 'parent.ts');
// argv: tag run windowMs (0: no deadline). Beats every 100 ms, each moving the deadline to window from now.
writeFileSync(
  parentFile,
  `import { LifelineDeadline, spawnGroup } from ${JSON.stringify(PROCESS_TS)};
import { systemClock } from ${JSON.stringify(CLOCK_TS)};
const [tag, run, window] = process.argv.slice(2);
const deadline = new LifelineDeadline(systemClock);
if (Number(window) > 0) {
  deadline.extend(Number(window));
  setInterval(() => deadline.extend(Number(window)), 100);
}
const agent = spawnGroup('sh', ['-c', 'sleep 1000 & exec sleep 1000'], { env: { ...process.env, TEST_TAG: tag }, run, deadline });
agent.stdout.resume();
setTimeout(() => process.stdout.write('started\\n'), 300);
`,
);

const started: Array<{ parent?: ChildProcess; tag: string; run: string }> = [];
after(async () => {
  for (const s of started) {
    s.parent?.kill('SIGCONT');
    s.parent?.kill('SIGKILL');
    killAll(tagged(s.tag));
    await killRun(s.run);
  }
  rmSync(dir, { recursive: true, force: true });
});

async function startParent(windowMs: number): Promise<{ parent: ChildProcess; tag: string }> {
  const tag = randomUUID();
  const run = `deadline${Date.now()}`;
  const parent = spawn(process.execPath, ['--import', 'tsx', parentFile, tag, run, String(windowMs)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  started.push({ parent, tag, run });
  await new Promise<void>((ok, fail) => {
    const timer = setTimeout(() => fail(new Error('the parent did not start its agent in 20 s')), 20_000);
    parent.stdout!.on('data', (c: Buffer) => {
      if (c.toString().includes('started')) {
        clearTimeout(timer);
        ok();
      }
    });
  });
  return { parent, tag };
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe('the lifeline deadline', () => {
  it('beats keep the agent (one timer at a time); without beats its watcher ends the whole group', async () => {
    const tag = randomUUID();
    const run = `deadline${Date.now()}`;
    started.push({ tag, run });
    const deadline = new LifelineDeadline(systemClock);
    deadline.extend(1000);
    const agent = spawnGroup('sh', ['-c', 'sleep 1000 & exec sleep 1000'], {
      env: { ...process.env, TEST_TAG: tag },
      run,
      deadline,
    });
    agent.stdout?.resume();
    try {
      // 50 beats over 2.5 s, more than twice the window: each re-arms the timer.
      for (let i = 0; i < 50; i++) {
        await sleep(50);
        deadline.extend(1000);
      }
      const pids = tagged(tag);
      assert.ok(pids.includes(agent.pid!), 'the agent still runs while beaten');
      // The agent and its child, the watcher, one timer and its sleep (and a rare sleep whose
      // timer was stopped as it started, ending on its own): the earlier beats' timers are gone.
      assert.ok(pids.length <= 8, `processes of the group: ${pids.length} (${pids.join(', ')})`);
      const clean = await eventually(() => tagged(tag).length === 0, 20_000);
      assert.ok(clean, `still alive without beats: ${tagged(tag).join(', ')}`);
    } finally {
      await killGroup(agent, 100);
    }
  });

  it('a server paused with its lifelines open has its agents ended by their watchers', async () => {
    const { parent, tag } = await startParent(1000);
    assert.ok(tagged(tag).length >= 2, 'the agent and its background child run');
    await sleep(1500); // beaten past its first window
    assert.ok(tagged(tag).length >= 2, 'beaten, the agent still runs');
    parent.kill('SIGSTOP');
    const clean = await eventually(() => tagged(tag).length === 0, 20_000);
    assert.ok(clean, `still alive while the server is paused: ${tagged(tag).join(', ')}`);
  });

  it('without a deadline a paused server keeps its agents (EOF only)', async () => {
    const { parent, tag } = await startParent(0);
    const before = tagged(tag).length;
    assert.ok(before >= 2);
    parent.kill('SIGSTOP');
    await sleep(2500);
    assert.equal(tagged(tag).length, before, 'nothing ended while the server is paused');
    parent.kill('SIGKILL');
    const clean = await eventually(() => tagged(tag).length === 0, 20_000);
    assert.ok(clean, `the lifeline's EOF still ends them: ${tagged(tag).join(', ')}`);
  });
});
