/**
 * Attacks on other agents and on warren's hold of its own (issue 25), by confined `command`
 * agents: one scans every `/proc/<pid>/environ` for another agent's secret, reads its parent's
 * command line, and SIGKILLs the other agent's host pid; one starts a grandchild that strips
 * its environment (warren's mark), calls setsid and moves itself to the root cgroup, then is
 * killed. None of it works: the other agent lives, the grandchild does not outlive the kill.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { until } from '../helpers/warrens.ts';
import { alive, bwrapMissing, type Confined, confined, hostPids } from './harness.ts';

const skip = await bwrapMissing();

const SNOOP = `
if grep -l "$NEEDLE_A$NEEDLE_B" /proc/[0-9]*/environ >/dev/null 2>&1; then echo "FOUND environ"; else echo "NOT FOUND environ"; fi
echo "PARENT $(tr '\\0' ' ' < /proc/$PPID/cmdline)"
echo "PIDS $(ls /proc | grep -c '^[0-9]')"
if kill -9 "$VICTIM" 2>/dev/null; then echo "KILLED"; else echo "NOT KILLED"; fi
echo done
`;

const ESCAPE = `
env -i setsid sh -c 'echo $$ > /sys/fs/cgroup/cgroup.procs 2>/dev/null; echo $$ > /sys/fs/cgroup/unified/cgroup.procs 2>/dev/null; exec sleep 1000.4242' </dev/null >/dev/null 2>&1 &
echo started
exec sleep 1000
`;

describe('confined command agents and other processes', { skip: skip ?? false }, () => {
  let w: Confined;
  before(async () => {
    w = await confined();
  });
  after(async () => {
    for (const pid of [...hostPids('1000.4242'), ...hostPids('1000.5151')]) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {}
    }
    await w?.close();
  });

  it("cannot read another agent's environment, see the server, or signal another agent", async () => {
    const needle = `victim-secret-${process.pid}`;
    const victim = await w.spawn({
      runtime: 'command',
      command: ['/bin/sh', '-c', 'echo up; exec sleep 1000.5151'],
      cwd: w.workdir('victim'),
      env: { ANTHROPIC_API_KEY: needle },
    });
    await w.line(victim, /^up$/);
    const [victimPid] = await until(() => {
      const p = hostPids('1000.5151');
      return p.length ? p : null;
    });
    const snoop = await w.spawn({
      runtime: 'command',
      command: ['/bin/sh', '-c', SNOOP],
      cwd: w.workdir('snoop'),
      env: { NEEDLE_A: needle.slice(0, 8), NEEDLE_B: needle.slice(8), VICTIM: String(victimPid) },
    });
    await w.line(snoop, /^done$/);
    const out = await w.outputs(snoop);
    assert.ok(out.includes('NOT FOUND environ'), out.join(' | '));
    assert.ok(out.includes('NOT KILLED'), out.join(' | '));
    const parent = out.find((l) => l.startsWith('PARENT ')) ?? '';
    // Its parent is its sandbox's init, whose command line names nothing of the host.
    assert.match(parent, /^PARENT \S*bwrap --args 4 -- \/bin\/sh -c /);
    assert.doesNotMatch(parent, /data|tmpfs/);
    assert.ok(alive(victimPid!), 'the other agent still runs');
    assert.equal((await w.show(victim)).status === 'stopped', false);
  });

  it('a grandchild that strips its mark, calls setsid and leaves its cgroup dies with its agent', async () => {
    const id = await w.spawn({
      runtime: 'command',
      command: ['/bin/sh', '-c', ESCAPE],
      cwd: w.workdir('escape'),
    });
    await w.line(id, /^started$/);
    await until(() => hostPids('1000.4242').length > 0, 10_000, 'the grandchild runs');
    const r = await fetch(`${w.running.url}/v1/sessions/${id}/kill`, {
      method: 'POST',
      headers: { authorization: `Bearer ${w.key}`, 'content-type': 'application/json' },
      body: '{}',
    });
    assert.equal(r.status, 200);
    await until(() => hostPids('1000.4242').length === 0, 10_000, 'the grandchild is gone');
  });
});
