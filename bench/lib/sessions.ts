import type { Warren } from '../../src/syscalls/warren.ts';
import { operator } from '../../src/vocab/principal.ts';

/** The operator every scale and load bench acts as. */
export const op = operator('bench');

/**
 * Limits out of the way (the benches measure the kernel, not its limits). `init` counts
 * toward maxChildren today, so operator-spawned sessions need it raised too.
 */
export const roomyKernel = (resumeOnStart: boolean) => ({
  limits: { maxDepth: 10, maxChildren: 100_000, maxSessionsPerZone: 100_000 },
  resumeOnStart,
});

/** A script agent that waits for input forever: an idle session once spawned. */
export const IDLE_SCRIPT = { steps: [{ listen: {} }] };

export interface Spawned {
  session: { id: string; status: string };
  lifecycleFd: number;
  pipeFd: number;
}

/** One idle script session, spawned by the operator the way the CLI does (`ipc_spawn`). */
export async function spawnIdle(warren: Warren, script: unknown = IDLE_SCRIPT): Promise<Spawned> {
  const res = (await warren.call(op, 'ipc_spawn', { runtime: 'script', script, pipe: 'detach' })) as Spawned;
  if (res.session.status !== 'running' && res.session.status !== 'idle')
    throw new Error(`spawned session is ${res.session.status}`);
  return res;
}

/**
 * Spawn latency at a fixed population: time one spawn, then (untimed) kill it and let its
 * writes settle, so the number of live sessions stays where it is.
 */
export async function spawnKillCycle(warren: Warren): Promise<number> {
  const t = performance.now();
  const res = await spawnIdle(warren);
  const ms = performance.now() - t;
  await warren.call(op, 'kill', { id: res.session.id });
  await warren.store.writer.drained();
  return ms;
}

/**
 * Grow the live population to `target` with `concurrency` spawns in flight, stopping at
 * `deadline` (a performance.now() time). Returns how many live sessions there are.
 */
export async function growTo(
  warren: Warren,
  live: number,
  target: number,
  deadline: number,
  concurrency = 4,
): Promise<number> {
  let count = live;
  const worker = async () => {
    while (count < target && performance.now() < deadline) {
      count++;
      try {
        await spawnIdle(warren);
      } catch (error) {
        count--;
        throw error;
      }
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
  return count;
}
