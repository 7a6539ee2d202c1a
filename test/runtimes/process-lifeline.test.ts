import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, describe, it } from 'node:test';
import { killRun } from '../../src/runtimes/process.ts';
import { eventually, killAll, tagged } from './process-tagged.ts';

/**
 * The attack: the server dies (SIGKILL: no handler runs) while its agents run. A real
 * parent node process starts an agent that forks (`sleep & sleep`) through spawnGroup and
 * is then killed; every process of that agent must be gone within 5 s.
 */
const PROCESS_TS = resolve(import.meta.dirname, '../../src/runtimes/process.ts');
const dir = mkdtempSync(join(tmpdir(), 'warren-lifeline-'));
const parentFile = join(dir, 'parent.ts');
writeFileSync(
  parentFile,
  `import { agentGroup, spawnGroup } from ${JSON.stringify(PROCESS_TS)};
const [tag, run, script] = process.argv.slice(2);
const agent = spawnGroup('bash', ['-c', script], { env: { ...process.env, TEST_TAG: tag }, run });
agent.stdout.resume();
setTimeout(() => process.stdout.write('started ' + (agent.pid ?? '') + ' ' + (agentGroup(agent)?.cgroup ?? '') + '\\n'), 300);
`,
);

const started: Array<{ parent: ChildProcess; tag: string; run: string }> = [];
after(async () => {
  for (const s of started) {
    s.parent.kill('SIGKILL');
    killAll(tagged(s.tag));
    await killRun(s.run);
  }
  rmSync(dir, { recursive: true, force: true });
});

async function startParent(script: string): Promise<{ parent: ChildProcess; tag: string; cgroup: boolean }> {
  const tag = randomUUID();
  const run = `lifeline${Date.now()}`;
  const parent = spawn(process.execPath, ['--import', 'tsx', parentFile, tag, run, script], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  started.push({ parent, tag, run });
  const line = await new Promise<string>((ok, fail) => {
    const timer = setTimeout(() => fail(new Error('the parent did not start its agent in 20 s')), 20_000);
    parent.stdout!.on('data', (c: Buffer) => {
      if (c.toString().includes('started')) {
        clearTimeout(timer);
        ok(c.toString().trim());
      }
    });
  });
  return { parent, tag, cgroup: (line.split(' ')[2] ?? '') !== '' };
}

describe('the lifeline: agents die with the server', () => {
  for (const signal of ['SIGKILL', 'SIGTERM'] as const) {
    it(`${signal} of the server ends the whole agent group within 5 s`, async () => {
      const { parent, tag } = await startParent('sleep 1000 & sleep 1000');
      assert.ok(tagged(tag).length >= 2, 'the agent and its background child run');
      parent.kill(signal);
      const clean = await eventually(() => tagged(tag).length === 0, 20_000);
      assert.ok(clean, `still alive after the server's ${signal}: ${tagged(tag).join(', ')}`);
    });
  }

  it('with a cgroup, a setsid grandchild dies with the server too', async (t) => {
    const { parent, tag, cgroup } = await startParent('setsid sleep 1000 & exec sleep 1000');
    if (!cgroup) return t.skip('no writable cgroup here: the next start sweeps it by its mark');
    assert.ok(tagged(tag).length >= 2);
    parent.kill('SIGKILL');
    const clean = await eventually(() => tagged(tag).length === 0, 20_000);
    assert.ok(clean, `still alive after the server's SIGKILL: ${tagged(tag).join(', ')}`);
  });
});
