import type { Warren } from '../../src/syscalls/warren.ts';
import { call } from './warrens.ts';

/**
 * Disable `name` and, first, every loaded plugin that depends on it (directly or not), in
 * reverse load order: disabling a plugin with enabled dependants is refused (`conflict`).
 * Returns what it disabled, dependants first.
 */
export async function disableWithDependants(w: Warren, name: string): Promise<string[]> {
  const loaded = w.plugins.loaded;
  const gone = new Set([name]);
  for (const p of loaded) if (p.dependsOn?.some((d) => gone.has(d))) gone.add(p.name);
  const order = loaded
    .map((p) => p.name)
    .filter((n) => gone.has(n))
    .reverse();
  for (const n of order) await call(w, 'plugin_disable', { name: n });
  return order;
}
