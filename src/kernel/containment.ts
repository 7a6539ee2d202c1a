import { existsSync, mkdirSync, realpathSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { findBwrap, probeBwrap } from '../runtimes/process/confine.ts';
import { runDir } from '../runtimes/rundir.ts';
import type { AgentConfinement, AgentSpec, Runtime } from '../runtimes/types.ts';
import { WarrenError } from '../vocab/errors.ts';
import type { KernelConfig } from './config.ts';
import type { NetworkGrant } from './grants.ts';

/**
 * Confinement of agent processes (docs/security.md, "Containment"). The `containment`
 * setting: `auto` confines with bubblewrap where it works and otherwise refuses agents that
 * can run shell commands; `bwrap` requires it (the kernel does not start without it);
 * `none` runs every agent as the server's user, unconfined, on the operator's word.
 */
export type ContainmentSetting = 'auto' | 'bwrap' | 'none';

/** Until the kernel has decided (in its start), nothing is confined: agents that run shells are refused. */
export const undecided = (): ContainmentState => ({
  setting: 'auto',
  inForce: 'unavailable',
  bwrap: null,
  reason: 'containment is decided when the kernel starts',
});

/** What this node does, decided once at start. */
export interface ContainmentState {
  setting: ContainmentSetting;
  /** `unavailable`: `auto` found no way to confine; agents that run shells are refused. */
  inForce: 'bwrap' | 'none' | 'unavailable';
  bwrap: string | null;
  /** Why bubblewrap is not in force (not installed, refused user namespaces), when it is not. */
  reason: string | null;
}

/** How one session's agent runs: recorded on its spawn event and shown by `session show`. */
export interface SessionContainment {
  /** `in-process`: no process of its own (script); `remote`: on a runner, confined there or not. */
  mode: 'bwrap' | 'none' | 'in-process' | 'remote';
  network?: NetworkGrant;
}

/**
 * Decides how this node confines agents: probes bubblewrap (a child process) unless the
 * setting is `none`. Rejects for `bwrap` where bubblewrap cannot make a sandbox.
 */
export async function resolveContainment(setting: ContainmentSetting): Promise<ContainmentState> {
  if (setting === 'none') return { setting, inForce: 'none', bwrap: null, reason: 'containment: none' };
  const bwrap = findBwrap();
  const reason = await probeBwrap(bwrap);
  if (reason === null) return { setting, inForce: 'bwrap', bwrap, reason: null };
  if (setting === 'bwrap') {
    throw new Error(`containment: bwrap, but ${reason} (install bubblewrap, or set containment: none)`);
  }
  return { setting, inForce: 'unavailable', bwrap: null, reason };
}

/** Runtimes whose agents can run shell commands unless told otherwise (fail closed). */
const runsShell = (rt: Runtime, spec: AgentSpec) => !rt.inProcess && (rt.runsShell?.(spec) ?? true);

/**
 * A session's network: its grant (grants.ts), within the node's `containmentNetwork`, which is
 * both the default (no grant) and the ceiling (a grant of `full` on a node set to `none` gets none).
 */
export interface SessionNetwork {
  granted: NetworkGrant | null;
  node: NetworkGrant;
}

export const networkOf = (n: SessionNetwork): NetworkGrant =>
  n.granted === 'none' || n.node === 'none' ? 'none' : 'full';

/**
 * A spawn that asks for `full` where the node gives agents no network is refused, like a grant
 * it does not hold: what it asked for could not be given. (An inherited `full` is narrowed.)
 */
export function checkNetworkAsk(asked: NetworkGrant | undefined, node: NetworkGrant): void {
  if (asked !== 'full' || node !== 'none') return;
  throw new WarrenError(
    'forbidden',
    'full network access is not granted: this node gives agents no network (containmentNetwork: none)',
    { grant: 'network', wanted: 'full' },
  );
}

/**
 * The containment a session of this runtime gets here, or `unavailable` when none can be
 * given and its agent could run shell commands, or its grant says network `none` and nothing
 * here would hold it to that (an unconfined or remote agent process).
 */
export function sessionContainment(
  state: ContainmentState,
  runner: string,
  rt: Runtime,
  spec: AgentSpec,
  net: SessionNetwork,
): SessionContainment {
  const noNetwork = (where: string) =>
    new WarrenError(
      'unavailable',
      `${rt.name}: this session's grant is network none, but its agent would run ${where}, where nothing keeps it off the network`,
      { grant: 'network', containment: state.setting },
    );
  if (runner !== 'local') {
    if (net.granted === 'none') throw noNetwork(`on runner ${runner}`);
    return { mode: 'remote' };
  }
  if (rt.inProcess) return { mode: 'in-process' };
  if (state.inForce === 'unavailable' && runsShell(rt, spec)) {
    throw new WarrenError(
      'unavailable',
      `${rt.name}: no confinement is available on this node (${state.reason}), and this agent can run shell commands: install bubblewrap, or set containment: none to run agents unconfined`,
      { containment: state.setting, reason: state.reason },
    );
  }
  if (state.inForce === 'bwrap' && rt.confines) return { mode: 'bwrap', network: networkOf(net) };
  if (net.granted === 'none') throw noNetwork(`unconfined (containment: ${state.setting})`);
  return { mode: 'none' };
}

/** The paths no agent may see, and the root of their homes: from the data dir. */
export function privatePaths(config: KernelConfig): { hidden: string[]; homes: string } {
  const hidden = config.privateDirs.filter((d) => existsSync(d)).map(real);
  const homes = hidden[0] ? join(hidden[0], 'homes') : join(tmpdir(), `warren-homes-${config.nodeId}`);
  return { hidden, homes };
}

/**
 * One session's sandbox: its data dir and the others' homes hidden, its own home made, warren's
 * package and node readable. Null when it is not confined.
 */
export function agentConfinement(
  state: ContainmentState,
  config: KernelConfig,
  sessionId: string,
  /** This node's mark prefix: its run dir holds the other agents' private files. */
  run: string,
  mode: SessionContainment,
  endpoint: { host: string; port: number } | null,
): AgentConfinement | null {
  if (mode.mode !== 'bwrap' || !state.bwrap) return null;
  const { hidden, homes } = privatePaths(config);
  const home = join(homes, sessionId);
  mkdirSync(home, { recursive: true, mode: 0o700 });
  const serverHome = real(homedir());
  return {
    bwrap: state.bwrap,
    // Secret: never visible, never a working directory. The server's home and temp: private.
    secret: [...hidden, homes, runDir(run)],
    private: [serverHome, real(tmpdir())],
    // Group agents still work under `<data dir>/groups` and reach their router.sock under
    // `<data dir>/ipc` (issue 25 moves the working directories out).
    exempt: hidden.flatMap((d) => [join(d, 'groups'), join(d, 'ipc')]),
    readable: [...new Set([packageRoot(), ...nodeModules(), dirname(dirname(real(process.execPath)))])],
    home,
    network: mode.network ?? 'full',
    endpoint: mode.network === 'none' ? endpoint : null,
  };
}

const real = (p: string) => {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
};

/** warren's own package (its node_modules hold the agent CLIs): the nearest dir above with node_modules. */
function packageRoot(): string {
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const up = dirname(dir);
    try {
      realpathSync(join(dir, 'node_modules'));
      return real(dir);
    } catch {}
    if (up === dir) return dirname(fileURLToPath(import.meta.url));
    dir = up;
  }
}

/** Its node_modules wherever a symlink puts them. */
function nodeModules(): string[] {
  try {
    return [realpathSync(join(packageRoot(), 'node_modules'))];
  } catch {
    return [];
  }
}
