import type { Kysely } from 'kysely';
import type { PluginTables } from '../../contract/plugin.ts';
import { DEFAULT_PAGE } from '../../contract/schemas.ts';
import type { Kernel } from '../../kernel/kernel.ts';
import { keysetPage } from '../../store/paging.ts';
import { WarrenError } from '../../vocab/errors.ts';
import { type Principal, principalId } from '../../vocab/principal.ts';
import { type ScheduleAction, writableFd } from './action.ts';
import { isActive, timingOf } from './firing.ts';
import type {
  FireStatus,
  MissedPolicy,
  OverlapPolicy,
  ScheduleFiresTable,
  SchedulesTable,
  SchedulingDb,
} from './schema.ts';
import { checkScheduleLimits, defaultScheduleLimits, type ScheduleLimits } from './standing.ts';
import { checkTimeZone, checkTiming, nextAfter, type Timing } from './timing.ts';

/** What operators and sessions do to schedules: create, edit, pause, resume, delete, run now. */

export interface ScheduleSpec {
  name?: string | undefined;
  cron?: string | undefined;
  tz?: string | undefined;
  intervalMs?: number | undefined;
  at?: number | string | undefined;
  nowIfPast?: boolean | undefined;
  task?: Record<string, unknown> | undefined;
  spawn?: Record<string, unknown> | undefined;
  stream?: { stream: string; message: string } | undefined;
  missed?: MissedPolicy | undefined;
  missedCap?: number | undefined;
  overlap?: OverlapPolicy | undefined;
  paused?: boolean | undefined;
}

/** The plugin's handle on its tables (schedules and their fires). */
type Tables = PluginTables<SchedulingDb>;

export const MAX_MISSED_CAP = 100;
const MAX_ACTION_BYTES = 64 * 1024;

const invalid = (field: string, message: string) =>
  new WarrenError('invalid_input', `${field}: ${message}`, { field });

/** The one timing the spec names (exactly one of cron, intervalMs, at). */
export function timingFrom(spec: ScheduleSpec, now: number): Timing {
  const given = (['cron', 'intervalMs', 'at'] as const).filter((k) => spec[k] !== undefined);
  if (given.length !== 1) {
    throw invalid(
      'cron',
      given.length === 0
        ? 'a schedule needs one of cron, intervalMs or at'
        : `give one of cron, intervalMs or at, not ${given.join(' and ')}`,
    );
  }
  if (spec.tz !== undefined && spec.cron === undefined)
    throw invalid('tz', 'a time zone goes with a cron expression');
  if (spec.cron !== undefined) {
    const t: Timing = {
      kind: 'cron',
      cron: spec.cron.trim(),
      tz: checkTimeZone(spec.tz ?? 'UTC'),
      intervalMs: null,
      at: null,
    };
    checkTiming(t);
    return t;
  }
  if (spec.intervalMs !== undefined)
    return { kind: 'interval', cron: null, tz: null, intervalMs: spec.intervalMs, at: null };
  const at = typeof spec.at === 'number' ? spec.at : Date.parse(String(spec.at));
  if (!Number.isFinite(at))
    throw invalid('at', `${JSON.stringify(spec.at)} is not a time (epoch ms or ISO 8601)`);
  if (at <= now && !spec.nowIfPast) {
    throw invalid(
      'at',
      `${new Date(at).toISOString()} is in the past; pass nowIfPast (--now-if-past) to fire it now`,
    );
  }
  return { kind: 'once', cron: null, tz: null, intervalMs: null, at: Math.max(at, now) };
}

/** The one action the spec names (exactly one of task, spawn, stream). */
export function actionFrom(spec: ScheduleSpec): ScheduleAction {
  const given = (['task', 'spawn', 'stream'] as const).filter((k) => spec[k] !== undefined);
  if (given.length !== 1) {
    throw invalid(
      'task',
      given.length === 0
        ? 'a schedule needs one action: task, spawn or stream'
        : `give one action, not ${given.join(' and ')}`,
    );
  }
  const action = (
    spec.task
      ? { kind: 'task', task: spec.task }
      : spec.spawn
        ? { kind: 'spawn', spawn: spec.spawn }
        : { kind: 'stream', stream: spec.stream }
  ) as ScheduleAction;
  const bytes = Buffer.byteLength(JSON.stringify(action));
  if (bytes > MAX_ACTION_BYTES) throw invalid(given[0]!, `${bytes} bytes; the limit is ${MAX_ACTION_BYTES}`);
  return action;
}

/** The first fire time of a new (or re-timed) schedule. */
function firstFire(t: Timing, now: number): number | null {
  if (t.kind === 'once') return t.at;
  if (t.kind === 'interval') return now + (t.intervalMs ?? 1);
  return nextAfter(t, now);
}

/** A schedule of the caller's zone it may act on: operators any, a session its own. */
async function scheduleOf(db: Kysely<SchedulingDb>, p: Principal, id: string) {
  const row = await db
    .selectFrom('scheduling_schedules')
    .selectAll()
    .where('id', '=', id)
    .where('zone', '=', p.zone)
    .executeTakeFirst();
  if (!row || (p.kind === 'session' && row.created_by !== p.sessionId)) {
    throw new WarrenError('not_found', `no schedule ${id}`);
  }
  return row;
}

/** The owner a fire acts as: the creator, as it was (a session keeps its tier and tools). */
const ownerOf = (p: Principal): Principal =>
  p.kind === 'operator'
    ? { kind: 'operator', name: p.name, zone: p.zone }
    : {
        kind: 'session',
        sessionId: p.sessionId,
        zone: p.zone,
        depth: p.depth,
        ...(p.tools ? { tools: p.tools } : {}),
      };

async function checkAction(kernel: Kernel, p: Principal, action: ScheduleAction): Promise<void> {
  // A stream action's fd is looked up at each fire; refuse one the creator cannot write now.
  if (action.kind === 'stream') await writableFd(kernel, p, action.stream.stream);
}

export async function createSchedule(
  kernel: Kernel,
  tables: Tables,
  p: Principal,
  spec: ScheduleSpec,
  limits: ScheduleLimits = defaultScheduleLimits,
): Promise<SchedulesTable> {
  const now = kernel.clock.now();
  const timing = timingFrom(spec, now);
  const action = actionFrom(spec);
  await checkAction(kernel, p, action);
  return tables.write(async (tx) => {
    await checkScheduleLimits(tx.db, p, timing, limits, now);
    const id = kernel.ids.id('sched');
    const row: SchedulesTable = {
      id,
      zone: p.zone,
      name: spec.name ?? id,
      kind: timing.kind,
      cron: timing.cron,
      tz: timing.tz,
      interval_ms: timing.intervalMs,
      at: timing.at,
      action: JSON.stringify(action),
      enabled: spec.paused ? 0 : 1,
      next_fire_at: firstFire(timing, tx.now),
      missed: spec.missed ?? 'skip',
      missed_cap: Math.min(spec.missedCap ?? 10, MAX_MISSED_CAP),
      overlap: spec.overlap ?? 'allow',
      owner: JSON.stringify(ownerOf(p)),
      created_by: principalId(p),
      created_at: tx.now,
      updated_at: tx.now,
      fires: 0,
      last_fire_at: null,
      last_fire_id: null,
      last_outcome: null,
    };
    await tx.db.insertInto('scheduling_schedules').values(row).execute();
    tx.append({
      zone: p.zone,
      type: 'schedule.created',
      actor: principalId(p),
      payload: {
        scheduleId: id,
        name: row.name,
        kind: row.kind,
        nextFireAt: row.next_fire_at,
        action: action.kind,
      },
    });
    return row;
  });
}

/** Edit a schedule: a new timing recomputes its next fire from now. */
export async function updateSchedule(
  kernel: Kernel,
  tables: Tables,
  p: Principal,
  id: string,
  spec: ScheduleSpec,
  limits: ScheduleLimits = defaultScheduleLimits,
): Promise<SchedulesTable> {
  const now = kernel.clock.now();
  const retimed = spec.cron !== undefined || spec.intervalMs !== undefined || spec.at !== undefined;
  const timing = retimed ? timingFrom(spec, now) : undefined;
  if (!retimed && spec.tz !== undefined) throw invalid('tz', 'a time zone goes with a cron expression');
  const hasAction = spec.task !== undefined || spec.spawn !== undefined || spec.stream !== undefined;
  const action = hasAction ? actionFrom(spec) : undefined;
  if (action) await checkAction(kernel, p, action);
  return tables.write(async (tx) => {
    const row = await scheduleOf(tx.db, p, id);
    await checkScheduleLimits(tx.db, p, timing, limits, now, row.id);
    const patch: Partial<SchedulesTable> = { updated_at: tx.now };
    if (spec.name !== undefined) patch.name = spec.name;
    if (timing) {
      Object.assign(patch, {
        kind: timing.kind,
        cron: timing.cron,
        tz: timing.tz,
        interval_ms: timing.intervalMs,
        at: timing.at,
        next_fire_at: firstFire(timing, tx.now),
      });
    }
    if (action) patch.action = JSON.stringify(action);
    if (spec.missed !== undefined) patch.missed = spec.missed;
    if (spec.missedCap !== undefined) patch.missed_cap = Math.min(spec.missedCap, MAX_MISSED_CAP);
    if (spec.overlap !== undefined) patch.overlap = spec.overlap;
    if (spec.paused !== undefined) patch.enabled = spec.paused ? 0 : 1;
    await tx.db.updateTable('scheduling_schedules').set(patch).where('id', '=', row.id).execute();
    tx.append({
      zone: p.zone,
      type: 'schedule.updated',
      actor: principalId(p),
      payload: {
        scheduleId: row.id,
        fields: Object.keys(spec).filter((k) => spec[k as keyof ScheduleSpec] !== undefined),
      },
    });
    return { ...row, ...patch };
  });
}

/**
 * Pause or resume. Resuming recomputes the next fire from now when the old one passed
 * while paused: a pause is not downtime, so nothing missed fires.
 */
export async function setEnabled(tables: Tables, p: Principal, id: string, enabled: boolean) {
  return tables.write(async (tx) => {
    const row = await scheduleOf(tx.db, p, id);
    const patch: Partial<SchedulesTable> = { enabled: enabled ? 1 : 0, updated_at: tx.now };
    if (enabled && row.enabled === 0 && row.next_fire_at !== null && Number(row.next_fire_at) < tx.now) {
      const t = timingOf(row);
      patch.next_fire_at = t.kind === 'once' ? tx.now : nextAfter(t, tx.now);
    }
    await tx.db.updateTable('scheduling_schedules').set(patch).where('id', '=', row.id).execute();
    tx.append({
      zone: p.zone,
      type: enabled ? 'schedule.resumed' : 'schedule.paused',
      actor: principalId(p),
      payload: { scheduleId: row.id },
    });
    return { ...row, ...patch };
  });
}

/**
 * An operator takes a schedule over (one whose creator was killed, or any): from now on its
 * fires act as that operator. Left as it was, enabled or not: `schedule_resume` restarts it.
 */
export async function adoptSchedule(tables: Tables, p: Principal, id: string) {
  return tables.write(async (tx) => {
    const row = await scheduleOf(tx.db, p, id);
    const patch: Partial<SchedulesTable> = {
      owner: JSON.stringify(ownerOf(p)),
      created_by: principalId(p),
      updated_at: tx.now,
    };
    await tx.db.updateTable('scheduling_schedules').set(patch).where('id', '=', row.id).execute();
    tx.append({
      zone: p.zone,
      type: 'schedule.adopted',
      actor: principalId(p),
      payload: { scheduleId: row.id, from: row.created_by },
    });
    return { ...row, ...patch };
  });
}

/** Delete a schedule; its fires stay in the log (a pending one is skipped). */
export async function deleteSchedule(tables: Tables, p: Principal, id: string) {
  return tables.write(async (tx) => {
    const row = await scheduleOf(tx.db, p, id);
    await tx.db.deleteFrom('scheduling_schedules').where('id', '=', row.id).execute();
    await tx.db
      .updateTable('scheduling_fires')
      .set({ status: 'skipped', error: 'its schedule was deleted', finished_at: tx.now })
      .where('schedule_id', '=', row.id)
      .where('status', '=', 'queued')
      .execute();
    tx.append({
      zone: p.zone,
      type: 'schedule.deleted',
      actor: principalId(p),
      payload: { scheduleId: row.id },
    });
    return row;
  });
}

/** Fire now, outside the timing (which is left as it is); the overlap policy still applies. */
export async function runNow(
  kernel: Kernel,
  tables: Tables,
  p: Principal,
  id: string,
): Promise<ScheduleFiresTable> {
  return tables.write(async (tx) => {
    const row = await scheduleOf(tx.db, p, id);
    const active = row.overlap === 'allow' ? false : await isActive(tx, row.id);
    const status: FireStatus = !active ? 'pending' : row.overlap === 'queue' ? 'queued' : 'skipped';
    const fire: ScheduleFiresTable = {
      id: kernel.ids.id('fire'),
      schedule_id: row.id,
      zone: row.zone,
      due_at: tx.now,
      fired_at: tx.now,
      manual: 1,
      status,
      target: null,
      error: status === 'skipped' ? 'overlap: the previous fire is still running' : null,
      node: status === 'pending' ? kernel.runId : null,
      claimed_at: status === 'pending' ? tx.now : null,
      finished_at: status === 'skipped' ? tx.now : null,
    };
    await tx.db.insertInto('scheduling_fires').values(fire).execute();
    await tx.db
      .updateTable('scheduling_schedules')
      .set({
        fires: row.fires + 1,
        last_fire_at: tx.now,
        last_fire_id: fire.id,
        last_outcome: status,
        updated_at: tx.now,
      })
      .where('id', '=', row.id)
      .execute();
    tx.append({
      zone: row.zone,
      type: 'schedule.fired',
      actor: principalId(p),
      payload: { scheduleId: row.id, fireId: fire.id, dueAt: tx.now, lateMs: 0, status, manual: true },
    });
    return fire;
  });
}

/** A page of the caller's schedules (operators: the zone's; sessions: their own), by id. */
export async function listSchedules(
  tables: Tables,
  p: Principal,
  q: { limit?: number | undefined; after?: string | undefined; enabled?: boolean | undefined },
) {
  const limit = q.limit ?? DEFAULT_PAGE;
  let query = tables.reader.selectFrom('scheduling_schedules').selectAll().where('zone', '=', p.zone);
  if (p.kind === 'session') query = query.where('created_by', '=', p.sessionId);
  if (q.enabled !== undefined) query = query.where('enabled', '=', q.enabled ? 1 : 0);
  if (q.after !== undefined) query = query.where('id', '>', q.after);
  return keysetPage(limit, (n) => query.orderBy('id').limit(n).execute());
}

/** One schedule and its latest fires (newest first). */
export async function showSchedule(tables: Tables, p: Principal, id: string, fires = 20) {
  const row = await scheduleOf(tables.reader, p, id);
  const recent = await tables.reader
    .selectFrom('scheduling_fires')
    .selectAll()
    .where('schedule_id', '=', row.id)
    .orderBy('fired_at', 'desc')
    .orderBy('id', 'desc')
    .limit(fires)
    .execute();
  return { row, fires: recent };
}
