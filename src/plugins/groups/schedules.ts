import { forbidden } from '../../vocab/errors.ts';
import { type Principal, principalId } from '../../vocab/principal.ts';

type Call = (p: Principal, name: string, input: unknown) => Promise<unknown>;
type Args = Record<string, unknown>;

/**
 * The scheduler tools as a group uses them: a group's schedules are its own (it sees and
 * changes only those it made), and fires act as the group, which is an operator of its zone
 * underneath — so a group may not schedule what would widen it: no `spawn` action, and no
 * task template that picks its own spawn or environment (the zone's defaults apply).
 */
export async function checkScheduleCall(call: Call, p: Principal, tool: string, args: Args): Promise<void> {
  if (tool === 'schedule_task' || tool === 'update_task') {
    if (args.spawn !== undefined)
      throw forbidden(`${tool}: a group schedules tasks or stream messages, not spawns`);
    const task = args.task as Args | undefined;
    if (task && typeof task === 'object' && (task.spawn !== undefined || task.environment !== undefined)) {
      throw forbidden(`${tool}: a group's scheduled task takes the zone's spawn and environment`);
    }
  }
  if (
    (tool === 'get_task' || tool === 'update_task' || tool === 'cancel_task') &&
    typeof args.id === 'string'
  ) {
    const r = (await call(p, 'schedule_show', { id: args.id, fires: 0 })) as {
      schedule: { createdBy: string };
    };
    if (r.schedule.createdBy !== principalId(p))
      throw forbidden(`${tool}: schedule ${args.id} is not this group's`);
  }
}

/** list_tasks shows a group its own schedules only. */
export function scopeScheduleOutput(p: Principal, tool: string, out: Args): Args {
  if (tool !== 'list_tasks' || !Array.isArray(out.schedules)) return out;
  const me = principalId(p);
  return {
    ...out,
    schedules: (out.schedules as Array<{ createdBy: string }>).filter((s) => s.createdBy === me),
  };
}
