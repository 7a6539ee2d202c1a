import type { Kysely } from 'kysely';
import { prefixRange } from '../../kernel/listing.ts';
import type { Warren } from '../../syscalls/warren.ts';
import type { Principal } from '../../vocab/principal.ts';

/**
 * Where completion values come from: each source gives at most `limit` values that start with
 * `prefix`, among what the caller may see, in one indexed query. Sessions and streams are the
 * kernel's own listings and its personas; tasks belong to the orchestration plugin, so they
 * are read only when it is loaded (one small function, which that plugin could take over).
 */
export type CompletionSource = 'sessions' | 'streams' | 'tasks' | 'personas';

type Lookup = (warren: Warren, p: Principal, prefix: string, limit: number) => Promise<string[]>;

export const SOURCES: Record<CompletionSource, Lookup> = {
  sessions: async (w, p, prefix, limit) =>
    (await w.kernel.listSessions(p, { prefix, limit })).map((s) => s.id),
  streams: (w, p, prefix, limit) => w.kernel.streamNames(p, { prefix, limit }),
  tasks: taskIds,
  personas: personaNames,
};

/**
 * The plugin table completion reads, as far as it reads them: declared here rather than
 * imported, so completion keeps working whatever else those plugins add to their rows.
 */
interface PluginTables {
  orchestration_tasks: { id: string; zone: string; created_by: string; session_id: string | null };
}
const pluginDb = (w: Warren) => w.store.reader as unknown as Kysely<PluginTables>;

/**
 * Task ids (the orchestration plugin's `orchestration_tasks`), only when that plugin is loaded. Operators
 * see their zone's tasks; a session, the tasks it created or runs.
 */
async function taskIds(w: Warren, p: Principal, prefix: string, limit: number): Promise<string[]> {
  if (!w.plugins.has('orchestration')) return [];
  const { from, to } = prefixRange(prefix);
  let q = pluginDb(w)
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
}

/** Persona names (core's `personas`, zone-scoped). */
async function personaNames(w: Warren, p: Principal, prefix: string, limit: number): Promise<string[]> {
  const { from, to } = prefixRange(prefix);
  let q = w.store.reader
    .selectFrom('personas')
    .select('name')
    .where('zone', '=', p.zone)
    .where('name', '>=', from);
  if (to !== null) q = q.where('name', '<', to);
  const rows = await q.orderBy('name', 'asc').limit(limit).execute();
  return rows.map((r) => r.name).filter((n) => n.startsWith(prefix));
}
