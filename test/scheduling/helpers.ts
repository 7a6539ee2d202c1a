import type { PluginInstance } from '../../src/contract/plugin.ts';
import type { Scheduler } from '../../src/plugins/scheduling/engine.ts';
import type { Warren } from '../../src/syscalls/warren.ts';
import { call, type Ev, op } from '../helpers/warrens.ts';

// biome-ignore lint/suspicious/noExplicitAny: syscall outputs are checked by their own schemas
type Any = any;

export const schedulerOf = (w: Warren) =>
  w.plugins.get<{ scheduler: Scheduler } & PluginInstance>('scheduling').scheduler;

/** An operator room to write to: a stream action's target. */
export async function room(w: Warren, name = 'ops'): Promise<string> {
  await call(w, 'streams_create', { name });
  return name;
}

export const create = async (w: Warren, input: Record<string, unknown>, who = op): Promise<Any> =>
  (await call(w, 'schedule_create', input, who)).schedule;

export const show = (w: Warren, id: string, who = op): Promise<Any> =>
  call(w, 'schedule_show', { id, fires: 200 }, who);

/** Every fire of a schedule, oldest first. */
export const firesOf = async (w: Warren, id: string): Promise<Any[]> => (await show(w, id)).fires.reverse();

/** The `schedule.fired` events, oldest first. */
export const firedEvents = async (w: Warren, scheduleId?: string): Promise<Ev[]> =>
  ((await call(w, 'events', { type: 'schedule.fired', limit: 10_000 })).events as Ev[])
    .filter((e) => scheduleId === undefined || e.payload.scheduleId === scheduleId)
    .sort((a, b) => a.seq - b.seq);

/** Run the scheduler's reconcile phase (fire, follow, recover) and wait for the actions it started. */
export async function tick(w: Warren): Promise<void> {
  await w.kernel.reconcile();
  await schedulerOf(w).settled();
}
