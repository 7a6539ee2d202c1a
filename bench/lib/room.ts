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
  await settle(w.warren);
}

/**
 * Until the writer has stayed idle for a moment: the writes, and the listener's turn on the
 * last one, which it takes only after that write's commit. Without it a block that follows
 * the same warren's block starts with that turn still in flight, its first write joins the
 * turn's batch and every write of the block after it does too (each one slower); a block
 * after the other warren's never does. With alternating orders the warren measured second
 * got one such block more in six, which made it 5-10 % slower with the same plugins loaded.
 */
async function settle(warren: Warren): Promise<void> {
  let batches = 0;
  const stop = warren.store.writer.onBatch(() => {
    batches++;
  });
  try {
    do {
      batches = 0;
      await warren.store.writer.drained();
      await new Promise((resolve) => setTimeout(resolve, 2));
    } while (batches > 0);
  } finally {
    stop();
  }
}
