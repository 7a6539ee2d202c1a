import { CommitTail } from '../../src/cluster/tail.ts';
import type { LogEvent } from '../../src/store/events.ts';
import type { Store } from '../../src/store/store.ts';
import { systemClock } from '../../src/util/clock.ts';
import { stderrLog } from '../../src/util/log.ts';

/**
 * A primed, unstarted ordered feed on `here` (its poll a minute: nothing reads the log until
 * the test says so), and the seqs its listeners hear: every node's (`any`) and the others'
 * (`remote`).
 */
export async function orderedFeed(
  here: Store,
): Promise<{ tail: CommitTail; any: number[]; remote: number[] }> {
  const tail = new CommitTail(here, systemClock, 60_000, stderrLog);
  await tail.prime();
  const any: number[] = [];
  const remote: number[] = [];
  here.writer.onAnyCommit((evs: readonly LogEvent[]) => any.push(...evs.map((e) => e.seq)));
  here.writer.onRemoteCommit((evs: readonly LogEvent[]) => remote.push(...evs.map((e) => e.seq)));
  return { tail, any, remote };
}
