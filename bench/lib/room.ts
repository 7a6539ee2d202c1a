import { Warren, type WarrenOptions } from '../../src/syscalls/warren.ts';
import { operator } from '../../src/vocab/principal.ts';

/**
 * The A/B write benches' subject: a warren with a room, one listening script agent attached
 * to it (async) and the operator's fd on it; and a block of timed `ipc_write`s through it.
 */

const op = operator('bench');
const benchKernel = {
  limits: { maxDepth: 10, maxChildren: 10_000, maxSessionsPerZone: 10_000 },
  resumeOnStart: false,
};

export interface RoomWarren {
  warren: Warren;
  fd: number;
}

export async function roomWarren(
  dir: string,
  opts: Omit<WarrenOptions, 'dataDir'> = {},
): Promise<RoomWarren> {
  const warren = await Warren.open({ dataDir: dir, kernel: benchKernel, ...opts });
  const { fd } = (await warren.call(op, 'streams_create', { name: 'bench-room' })) as { fd: number };
  const { session } = (await warren.call(op, 'ipc_spawn', {
    runtime: 'script',
    script: { steps: [{ listen: {} }] },
    pipe: 'detach',
  })) as { session: { id: string } };
  await warren.call(op, 'streams_attach', { session: session.id, stream: 'bench-room', mode: 'async' });
  return { warren, fd };
}

/** `n` operator writes one after another, each round trip's milliseconds pushed to `into`; then settle. */
export async function writeBlock(w: RoomWarren, into: number[], n: number): Promise<void> {
  for (let i = 0; i < n; i++) {
    const t = performance.now();
    await w.warren.call(op, 'ipc_write', { fd: w.fd, message: `m${i}` });
    into.push(performance.now() - t);
  }
  await w.warren.store.writer.drained();
}
