import { realpathSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { WarrenError } from '../vocab/errors.ts';
import { inside } from './process/confine.ts';
import type { ConfineOptions } from './process/group.ts';
import { agentTempDir } from './rundir.ts';
import type { AgentContext } from './types.ts';

/**
 * spawnGroup's `confine` for this agent, or undefined when it runs unconfined: its working
 * directory writable, its `readable` private files (an MCP config) visible, and for network
 * `none` the socket that carries it to warren. A working directory that is, or lies in, one
 * of warren's private paths is refused: binding it would show what the sandbox hides.
 */
export function confineOptions(
  ctx: Pick<AgentContext, 'confine' | 'run'>,
  workdir: string,
  more: {
    readable?: readonly string[];
    writable?: readonly string[];
    /** Unix sockets it may connect to (a group's router.sock), bound in writable. */
    sockets?: readonly string[];
  } = {},
): ConfineOptions | undefined {
  const c = ctx.confine;
  if (!c) return undefined;
  const cwd = real(workdir);
  for (const path of [cwd, ...(more.writable ?? []), ...(more.sockets ?? [])].map(real)) {
    if (c.secret.some((s) => inside(path, s)) && !c.exempt.some((e) => inside(path, e))) {
      throw new WarrenError(
        'forbidden',
        `a confined agent may not be given ${JSON.stringify(path)}: it is or lies in warren's private files`,
        { path },
      );
    }
  }
  const socket = c.endpoint ? join(agentTempDir(ctx.run, 'net'), 'warren.sock') : undefined;
  return {
    bwrap: c.bwrap,
    home: c.home,
    sandbox: {
      hide: [...c.secret, ...c.private.filter((p) => p !== cwd)],
      writable: [cwd, ...(more.writable ?? []), ...(more.sockets ?? [])],
      readable: [...c.readable, ...(more.readable ?? [])],
      network: c.network,
      cwd,
      ...(socket ? { socket } : {}),
    },
    ...(c.endpoint ? { endpoint: c.endpoint } : {}),
  };
}

const real = (p: string) => {
  try {
    return realpathSync(p);
  } catch {
    return resolve(p);
  }
};
