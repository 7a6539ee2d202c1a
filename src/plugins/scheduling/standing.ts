import type { Kysely } from 'kysely';
import type { PluginTables } from '../../contract/plugin.ts';
import type { Kernel } from '../../kernel/kernel.ts';
import type { LogEvent } from '../../store/events.ts';
import { WarrenError } from '../../vocab/errors.ts';
import { operator, type Principal } from '../../vocab/principal.ts';
import type { SchedulingDb } from './schema.ts';
import { nextAfter, type Timing } from './timing.ts';

/**
 * Schedules are standing objects: they act for their creator after the call that made them.
 * So they follow their creator's end as its fds do (DESIGN.md): killed, terminated, reaped
 * (torn down with a subtree) or over budget, its schedules are disabled; ended on its own
 * (completed, crashed, expired), they pass to its parent, which then answers for them — or
 * are disabled when that parent is `init`, since a schedule acting as init would act with no
 * grant at all. An operator adopts or deletes what is left. And a session may not make many,
 * nor fast ones.
 */

export interface ScheduleLimits {
  /** Schedules one session may hold (enabled or paused). */
  maxPerSession: number;
  /** The shortest period a session's schedule may fire at (interval, or a cron's gap). */
  minIntervalMs: number;
}

export const defaultScheduleLimits: ScheduleLimits = { maxPerSession: 50, minIntervalMs: 10_000 };

/** Ends after which a session's children (and schedules) pass to its parent. */
const NATURAL_ENDS = new Set(['completed', 'crashed', 'expired']);

/** Refuse a session's schedule over its caps; operators are not capped. */
export async function checkScheduleLimits(
  db: Kysely<SchedulingDb>,
  p: Principal,
  timing: Timing | undefined,
  limits: ScheduleLimits,
  now: number,
  replacing?: string,
): Promise<void> {
  if (p.kind !== 'session') return;
  if (timing && timing.kind !== 'once') {
    const first = nextAfter(timing, now);
    const second = first === null ? null : nextAfter(timing, first);
    const period =
      timing.kind === 'interval'
        ? (timing.intervalMs ?? 0)
        : first !== null && second !== null
          ? second - first
          : Infinity;
    if (period < limits.minIntervalMs) {
      throw new WarrenError(
        'invalid_input',
        `a session's schedule fires at most every ${limits.minIntervalMs} ms (this one every ${period} ms): the scheduling plugin's minIntervalMs`,
        { field: timing.kind === 'interval' ? 'intervalMs' : 'cron', minIntervalMs: limits.minIntervalMs },
      );
    }
  }
  if (replacing) return;
  const held = await db
    .selectFrom('scheduling_schedules')
    .select((eb) => eb.fn.countAll<number>().as('n'))
    .where('created_by', '=', p.sessionId)
    .executeTakeFirstOrThrow();
  if (Number(held.n) >= limits.maxPerSession) {
    throw new WarrenError(
      'limit_exceeded',
      `a session holds at most ${limits.maxPerSession} schedules (the scheduling plugin's maxPerSession): delete one first`,
      { limit: 'maxPerSession', max: limits.maxPerSession },
    );
  }
}

/** A session that stopped, with how. */
export interface SessionEnd {
  id: string;
  zone: string;
  reason: string;
}

/** Sessions that stopped in this batch, with how: read on every commit, so plain and synchronous. */
export function stopped(events: readonly LogEvent[]): SessionEnd[] {
  const out: SessionEnd[] = [];
  for (const e of events) {
    if (e.type !== 'session.status' || !e.session_id || e.payload.to !== 'stopped') continue;
    out.push({ id: e.session_id, zone: e.zone, reason: String(e.payload.endReason ?? '') });
  }
  return out;
}

/**
 * Follow `ends` (`stopped` of a batch): disable, or hand to the parent, what each stopped
 * session created. One write per session that held any; nothing for the rest.
 */
export async function followEnds(
  kernel: Kernel,
  tables: PluginTables<SchedulingDb>,
  ends: readonly SessionEnd[],
): Promise<void> {
  for (const end of ends) {
    const held = await tables.reader
      .selectFrom('scheduling_schedules')
      .select('id')
      .where('created_by', '=', end.id)
      .execute();
    if (held.length === 0) continue;
    const admin = operator('scheduling', end.zone);
    let heir: Principal | null = null;
    if (NATURAL_ENDS.has(end.reason)) {
      const s = await kernel.session(admin, end.id);
      const parent = s.parentId ? await kernel.session(admin, s.parentId) : null;
      if (parent && parent.depth > 0 && parent.status !== 'stopped') {
        heir = {
          kind: 'session',
          sessionId: parent.id,
          zone: end.zone,
          depth: parent.depth,
          ...(parent.tools ? { tools: parent.tools } : {}),
        };
      }
    }
    await tables.write(async (tx) => {
      const ids = held.map((r) => r.id);
      if (heir && heir.kind === 'session') {
        await tx.db
          .updateTable('scheduling_schedules')
          .set({ created_by: heir.sessionId, owner: JSON.stringify(heir), updated_at: tx.now })
          .where('id', 'in', ids)
          .where('created_by', '=', end.id)
          .execute();
      } else {
        await tx.db
          .updateTable('scheduling_schedules')
          .set({ enabled: 0, updated_at: tx.now })
          .where('id', 'in', ids)
          .where('created_by', '=', end.id)
          .execute();
      }
      tx.append({
        zone: end.zone,
        type: heir ? 'schedule.inherited' : 'schedule.disabled',
        actor: 'operator:scheduling',
        session_id: end.id,
        payload: {
          scheduleIds: ids,
          creator: end.id,
          endReason: end.reason,
          ...(heir && heir.kind === 'session' ? { heir: heir.sessionId } : {}),
        },
      });
    });
  }
}
