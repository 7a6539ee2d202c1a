import type { Completion } from '../../contract/plugin.ts';
import { prefixRange } from '../../kernel/listing.ts';
import type { OrchestrationSelf } from './instance.ts';

/**
 * Task ids an MCP client completes: an operator sees its zone's tasks; a session, the tasks
 * it created or runs. One indexed range over the plugin's own table.
 */
export const taskCompletions: readonly Completion[] = [
  {
    kind: 'tasks',
    via: 'task_show',
    async values({ self, principal: p }, prefix, limit) {
      const { tables } = self as OrchestrationSelf;
      const { from, to } = prefixRange(prefix);
      let q = tables.reader
        .selectFrom('orchestration_tasks')
        .select('id')
        .where('zone', '=', p.zone)
        .where('id', '>=', from);
      if (to !== null) q = q.where('id', '<', to);
      if (p.kind === 'session') {
        const me = p.sessionId;
        q = q.where((eb) => eb.or([eb('created_by', '=', me), eb('session_id', '=', me)]));
      }
      const rows = await q.orderBy('id', 'asc').limit(limit).execute();
      return rows.map((r) => r.id).filter((id) => id.startsWith(prefix));
    },
  },
];
