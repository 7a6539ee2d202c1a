import type { PluginTx } from '../../contract/plugin.ts';
import type { IdGenerator } from '../../util/ids.ts';
import { FIRE_ACTIVE, type FireStatus, type SchedulesTable, type SchedulingDb } from './schema.ts';
import { cronOf, nextAfter, type Timing } from './timing.ts';

/** How a firing pass runs: its limits and who claims the fires it logs. */
export interface PassOptions {
  /** Schedules fired per transaction; the pass loops until none is due. */
  batch: number;
  /** A due time older than this when its fire is logged counts as missed. */
  graceMs: number;
  /** This server's run: it claims (executes) the fires it logs. */
  node: string;
  ids: IdGenerator;
}

/** A fire logged as pending: the caller runs its action once the transaction commits. */
export interface LoggedFire {
  id: string;
  scheduleId: string;
  status: FireStatus;
}

export const timingOf = (r: SchedulesTable): Timing => ({
  kind: r.kind,
  cron: r.cron,
  tz: r.tz,
  intervalMs: r.interval_ms === null ? null : Number(r.interval_ms),
  at: r.at === null ? null : Number(r.at),
});

/** Past this many missed times, the count in `schedule.missed` is a lower bound (cron only). */
const MAX_COUNT = 10_000;

/**
 * The due times of a schedule up to `now`, oldest first: at most `keep` of them (the
 * latest), how many more were passed over, and its next time after `now`. Bounded work
 * whatever the downtime: intervals by arithmetic, cron by croner's previous runs.
 */
export function dueTimes(r: SchedulesTable, now: number, keep: number) {
  const timing = timingOf(r);
  const first = r.next_fire_at === null ? null : Number(r.next_fire_at);
  if (first === null || first > now) return { dues: [] as number[], passed: 0, next: first };
  if (timing.kind === 'once') return { dues: [first], passed: 0, next: null };
  if (timing.kind === 'interval') {
    const p = timing.intervalMs ?? 1;
    const count = Math.floor((now - first) / p) + 1;
    const n = Math.min(count, keep);
    const dues = Array.from({ length: n }, (_, i) => first + (count - n + i) * p);
    return { dues, passed: count - n, next: first + count * p };
  }
  const cron = cronOf(timing.cron ?? '', timing.tz ?? 'UTC');
  const dues = cron
    .previousRuns(keep, new Date(now + 1))
    .map((d) => d.getTime())
    .filter((t) => t >= first && t <= now)
    .sort((a, b) => a - b);
  if (dues.length === 0 || dues[0] !== first) dues.unshift(first);
  while (dues.length > keep) dues.shift();
  let count = 0;
  for (let t: number | null = first; t !== null && t <= now && count < MAX_COUNT; t = nextAfter(timing, t))
    count++;
  return { dues, passed: Math.max(0, count - dues.length), next: nextAfter(timing, now) };
}

/**
 * What the missed-fire policy fires of `dues` (oldest first, the last the current one):
 * a current one still within grace always fires; missed ones by policy.
 */
export function toFire(r: SchedulesTable, dues: number[], now: number, graceMs: number): number[] {
  if (dues.length === 0) return [];
  const latest = dues[dues.length - 1]!;
  const current = now - latest <= graceMs;
  switch (r.missed) {
    case 'skip':
      return current ? [latest] : [];
    case 'run-once':
      return [latest];
    case 'run-all':
      return dues.slice(-Math.max(1, r.missed_cap));
  }
}

/**
 * One transaction of a firing pass: the earliest due enabled schedules (on PostgreSQL
 * locked, skipping rows another server holds), each fire logged (a `scheduling_fires` row
 * and a `schedule.fired` event) together with its schedule's `next_fire_at` advance. A crash
 * either keeps both or neither: no fire twice, none lost. Returns the fires to run.
 */
export async function fireDue(
  tx: PluginTx<SchedulingDb>,
  o: PassOptions,
): Promise<{ fires: LoggedFire[]; more: boolean }> {
  const db = tx.db;
  const now = tx.now;
  let q = db
    .selectFrom('scheduling_schedules')
    .selectAll()
    .where('enabled', '=', 1)
    .where('next_fire_at', '<=', now)
    .orderBy('next_fire_at')
    .limit(o.batch);
  if (tx.kind === 'postgres') q = q.forUpdate().skipLocked();
  const rows = await q.execute();
  const fires: LoggedFire[] = [];
  for (const r of rows) {
    const keep = Math.max(1, r.missed === 'run-all' ? r.missed_cap : 1);
    const { dues, passed, next } = dueTimes(r, now, keep);
    const chosen = toFire(r, dues, now, o.graceMs);
    const dropped = passed + dues.length - chosen.length;
    let active = r.overlap === 'allow' ? false : await isActive(tx, r.id);
    let last: { id: string; status: FireStatus } | null = null;
    for (const due of chosen) {
      let status: FireStatus = 'pending';
      if (active && r.overlap === 'skip-if-running') status = 'skipped';
      else if (active && r.overlap === 'queue') status = 'queued';
      else if (r.overlap !== 'allow') active = true;
      const id = o.ids.id('fire');
      await db
        .insertInto('scheduling_fires')
        .values({
          id,
          schedule_id: r.id,
          zone: r.zone,
          due_at: due,
          fired_at: now,
          manual: 0,
          status,
          target: null,
          error: status === 'skipped' ? 'overlap: the previous fire is still running' : null,
          node: status === 'pending' ? o.node : null,
          claimed_at: status === 'pending' ? now : null,
          finished_at: status === 'skipped' ? now : null,
        })
        .execute();
      tx.append({
        zone: r.zone,
        type: 'schedule.fired',
        actor: 'kernel',
        payload: { scheduleId: r.id, fireId: id, dueAt: due, lateMs: now - due, status },
      });
      if (status === 'pending') fires.push({ id, scheduleId: r.id, status });
      last = { id, status };
    }
    if (dropped > 0) {
      tx.append({
        zone: r.zone,
        type: 'schedule.missed',
        actor: 'kernel',
        payload: { scheduleId: r.id, missed: dropped, policy: r.missed },
      });
    }
    await db
      .updateTable('scheduling_schedules')
      .set({
        next_fire_at: next,
        updated_at: now,
        fires: r.fires + chosen.length,
        ...(last ? { last_fire_at: now, last_fire_id: last.id, last_outcome: last.status } : {}),
      })
      .where('id', '=', r.id)
      .execute();
  }
  return { fires, more: rows.length === o.batch };
}

/** Whether a schedule has a fire whose action is under way (its overlap policy asks). */
export async function isActive(tx: PluginTx<SchedulingDb>, scheduleId: string): Promise<boolean> {
  const row = await tx.db
    .selectFrom('scheduling_fires')
    .select('id')
    .where('schedule_id', '=', scheduleId)
    .where('status', 'in', FIRE_ACTIVE)
    .limit(1)
    .executeTakeFirst();
  return row !== undefined;
}
