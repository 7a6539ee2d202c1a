import { type ChildProcess, spawn } from 'node:child_process';
import type { Server, Socket } from 'node:net';
import { FORWARDER, openBridge } from './bridge.ts';
import { makeCgroup, removeCgroup, signalCgroup } from './cgroup.ts';
import { bwrapOptions, type Confinement, SANDBOX_SOCKET } from './confine.ts';
import type { LifelineDeadline } from './deadline.ts';
import { bootId, type ProcessRecord, processStartTime } from './identity.ts';
import { lifelineArgv, SHELL } from './lifeline.ts';
import { MARK_VAR, newMark, signalMarked } from './marks.ts';

/** What spawnGroup keeps about one agent process group. */
export interface AgentGroup {
  /** `<run>.<group>`: in the environment of the agent and everything it starts. */
  readonly mark: string;
  /** The agent's cgroup directory, when one could be made. */
  readonly cgroup: string | null;
  readonly lifeline: Socket | null;
  readonly startTime: string | null;
  readonly bootId: string | null;
  /** The socket that carries a network-less sandbox's way to warren (closed with the group). */
  readonly bridge: Server | null;
}

/** Run the agent inside a bubblewrap sandbox (confine.ts). */
export interface ConfineOptions {
  /** The bwrap executable. */
  bwrap: string;
  sandbox: Confinement;
  /** The agent's home inside the sandbox (writable, its HOME). */
  home: string;
  /**
   * Network `none`: warren's HTTP address on the host, reached from the sandbox's
   * 127.0.0.1:`port` through `sandbox.socket` (bridge.ts).
   */
  endpoint?: { host: string; port: number };
}

export interface SpawnGroupOptions {
  cwd?: string;
  env: NodeJS.ProcessEnv;
  /**
   * The run prefix of the marks (letters, digits, `_`, `-`): a run's survivors can be ended
   * by it later (`killRun`). Default: one per server process.
   */
  run?: string;
  /** Confine the agent (bubblewrap); absent: it runs as the server's user, unconfined. */
  confine?: ConfineOptions;
  /** The deadline its lifeline watcher holds besides EOF (deadline.ts); absent: EOF only. */
  deadline?: LifelineDeadline;
}

const GROUP = Symbol('warren.agentGroup');

/** Bounds: a stop never waits longer than grace + these, whatever the processes do. */
const KILL_WAIT_MS = 1000;
const STDIO_DRAIN_MS = 300;
const CGROUP_WAIT_MS = 300;

/**
 * An agent process in its own process group (and session), held three ways: the group, a
 * cgroup where one can be made, and a mark in its environment. A lifeline pipe ends the
 * group when the server dies (see lifeline.ts). When the agent exits, whatever it left
 * behind is ended too: nothing it started outlives it.
 */
export function spawnGroup(cmd: string, args: string[], opts: SpawnGroupOptions): ChildProcess {
  const mark = newMark(opts.run ?? `pid${process.pid}`);
  const cgroup = makeCgroup(mark);
  const confined = opts.confine ? confinedArgv(opts.confine, cmd, args) : null;
  const left = opts.deadline?.secondsLeft() ?? null;
  const argv = lifelineArgv(cgroup, left, confined?.cmd ?? cmd, confined?.args ?? args);
  const child = spawn(SHELL, argv, {
    cwd: opts.cwd,
    env: { ...opts.env, ...confined?.env, [MARK_VAR]: mark },
    detached: true,
    stdio: confined ? ['pipe', 'pipe', 'pipe', 'pipe', 'pipe'] : ['pipe', 'pipe', 'pipe', 'pipe'],
  });
  // bwrap reads its arguments from fd 4, so they are not on its command line for the agent to read.
  if (confined) {
    const argsPipe = child.stdio[4] as Socket | null;
    argsPipe?.on('error', () => {});
    argsPipe?.end(confined.argv);
  }
  const lifeline = (child.stdio[3] as Socket | null) ?? null;
  lifeline?.on('error', () => {}); // it only closes, or takes a beat its watcher may no longer read
  lifeline?.unref(); // the agent's own pipes keep the server up, not the lifeline
  if (lifeline && left !== null) opts.deadline?.hold(lifeline);
  const group: AgentGroup = {
    mark,
    cgroup,
    lifeline,
    startTime: child.pid !== undefined ? processStartTime(child.pid) : null,
    bootId: bootId(),
    bridge: confined?.bridge ?? null,
  };
  Object.defineProperty(child, GROUP, { value: group });
  // No pid: it never started (a bad cwd); 'error' tells the caller, we only tidy up.
  if (child.pid === undefined) void release(child, group);
  else child.once('exit', () => void endLeftovers(child, group));
  return child;
}

/**
 * The lifeline shell execs bwrap, which keeps the pid and the group; the agent runs inside.
 * A network-less agent runs under FORWARDER (node), which gives it warren on its loopback.
 */
function confinedArgv(c: ConfineOptions, cmd: string, args: string[]) {
  const bridge = c.endpoint && c.sandbox.socket ? openBridge(c.sandbox.socket, c.endpoint) : null;
  const inner: [string, string[]] =
    bridge && c.endpoint
      ? [process.execPath, ['-e', FORWARDER, String(c.endpoint.port), SANDBOX_SOCKET, cmd, ...args]]
      : [cmd, args];
  const sandbox = { ...c.sandbox, writable: [...c.sandbox.writable, c.home] };
  return {
    cmd: c.bwrap,
    args: ['--args', '4', '--', inner[0], ...inner[1]],
    argv: `${bwrapOptions(sandbox).join('\0')}\0`,
    env: { HOME: c.home, TMPDIR: '/tmp' },
    bridge,
  };
}

/** The group of a child started by spawnGroup, if it was. */
export function agentGroup(child: ChildProcess): AgentGroup | undefined {
  return (child as unknown as { [GROUP]?: AgentGroup })[GROUP];
}

/** What the kernel records to find this group again after a crash (null if it never started). */
export function groupRecord(child: ChildProcess): (ProcessRecord & { mark: string }) | null {
  const g = agentGroup(child);
  if (child.pid === undefined || !g?.startTime) return null;
  return { pid: child.pid, pgid: child.pid, startTime: g.startTime, bootId: g.bootId, mark: g.mark };
}

/**
 * Stop an agent: SIGTERM to everything it holds, SIGKILL after `graceMs`, then end what is
 * left and release its pipes. Resolves within about graceMs + 2 s whatever the processes do
 * with their stdio (pipes that stay open are destroyed, not waited for).
 */
export async function killGroup(child: ChildProcess, graceMs = 1000): Promise<void> {
  const group = agentGroup(child);
  if (child.pid !== undefined && running(child)) {
    await signalAll(child.pid, group, 'SIGTERM');
    await exited(child, graceMs);
    await signalAll(child.pid, group, 'SIGKILL');
    await exited(child, KILL_WAIT_MS);
  } else if (group) {
    // Exited before: its group id may since belong to someone else; the mark and cgroup are ours.
    await signalAll(null, group, 'SIGKILL');
  }
  await release(child, group);
}

const running = (child: ChildProcess) => child.exitCode === null && child.signalCode === null;

function exited(child: ChildProcess, ms: number): Promise<boolean> {
  if (!running(child)) return Promise.resolve(true);
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      child.off('exit', done);
      resolve(false);
    }, ms);
    function done() {
      clearTimeout(timer);
      resolve(true);
    }
    child.once('exit', done);
  });
}

async function signalAll(
  pgid: number | null,
  group: AgentGroup | undefined,
  signal: NodeJS.Signals,
): Promise<void> {
  if (pgid !== null) {
    try {
      process.kill(-pgid, signal);
    } catch {} // the group is gone
  }
  if (!group) return;
  if (group.cgroup) signalCgroup(group.cgroup, signal);
  await signalMarked({ mark: group.mark }, signal);
}

/** After the agent exited on its own: end what it left behind, in or out of its group. */
async function endLeftovers(child: ChildProcess, group: AgentGroup): Promise<void> {
  group.lifeline?.destroy(); // the watcher sees EOF and kills the group
  await signalAll(child.pid!, group, 'SIGKILL');
  await release(child, group);
}

/** Close the lifeline, let the pipes drain briefly then destroy them, remove the cgroup. */
async function release(child: ChildProcess, group: AgentGroup | undefined): Promise<void> {
  group?.lifeline?.destroy();
  group?.bridge?.close();
  await drained(child, STDIO_DRAIN_MS);
  for (const s of [child.stdin, child.stdout, child.stderr]) s?.destroy();
  if (group?.cgroup && !(await removeCgroup(group.cgroup, CGROUP_WAIT_MS))) {
    void removeCgroup(group.cgroup, 5000); // members still being reaped: finish in the background
  }
}

function drained(child: ChildProcess, ms: number): Promise<void> {
  const open = [child.stdout, child.stderr].filter((s) => s && !s.closed && !s.destroyed);
  if (open.length === 0) return Promise.resolve();
  return new Promise((resolve) => {
    let left = open.length;
    const timer = setTimeout(resolve, ms);
    for (const s of open)
      s!.once('close', () => {
        if (--left === 0) {
          clearTimeout(timer);
          resolve();
        }
      });
  });
}
