import { removeCgroup, removeStaleCgroups, runCgroups, signalCgroup } from './cgroup.ts';
import { signalMarked } from './marks.ts';

/**
 * End every process a run left alive: the members of its cgroups and every process that
 * carries one of its marks (descendants that left their group included), and remove the
 * cgroups (and empty ones any run left behind). For the kernel's startup sweep, before
 * anything of the new run is started: the new run's own agents carry the same prefix.
 * Returns how many processes it signalled.
 */
export async function killRun(run: string): Promise<number> {
  let sent = 0;
  for (const dir of await runCgroups(run)) {
    sent += signalCgroup(dir, 'SIGKILL');
    await removeCgroup(dir, 2000);
  }
  sent += await signalMarked({ run }, 'SIGKILL');
  await removeStaleCgroups(); // empty ones any run left behind
  return sent;
}
