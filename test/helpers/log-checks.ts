import assert from 'node:assert/strict';
import type { Store } from '../../src/store/store.ts';

/** The checks the crash and cluster tests make of the log once the dust settles. */

/** The log holds seqs 1..head, every one: nothing lost in a gap. */
export async function assertGapFree(store: Store): Promise<number> {
  const span = await store.reader
    .selectFrom('events')
    .select((eb) => [eb.fn.countAll<number>().as('n'), eb.fn.min('seq').as('lo'), eb.fn.max('seq').as('hi')])
    .executeTakeFirstOrThrow();
  assert.equal(Number(span.lo), 1);
  assert.equal(Number(span.n), Number(span.hi), 'seqs 1..head, no gap');
  return Number(span.hi);
}

/** Every acknowledged message is in the log at the seq it was acknowledged with. */
export async function assertAckedInLog(
  store: Store,
  acked: readonly { seq: number; text: string }[],
): Promise<void> {
  const rows = await store.reader
    .selectFrom('events')
    .select(['seq', 'payload'])
    .where('type', '=', 'stream.message')
    .execute();
  const bySeq = new Map(rows.map((r) => [Number(r.seq), JSON.parse(r.payload).text as string]));
  for (const m of acked) assert.equal(bySeq.get(m.seq), m.text, `acknowledged ${m.text} at seq ${m.seq}`);
}

/** A session's status changes, oldest first. */
export async function statusChanges(
  store: Store,
  session: string,
): Promise<{ to: string; reason?: string }[]> {
  const rows = await store.reader
    .selectFrom('events')
    .select(['payload'])
    .where('session_id', '=', session)
    .where('type', '=', 'session.status')
    .orderBy('seq')
    .execute();
  return rows.map((e) => JSON.parse(e.payload) as { to: string; reason?: string });
}
