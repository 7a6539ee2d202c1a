import type { Plugin } from '../contract/plugin.ts';

/** A plugin set that cannot be brought up: a cycle, a missing or disabled dependency. */
export class PluginOrderError extends Error {
  override name = 'PluginOrderError';
}

/**
 * The plugins to load, dependencies first (stable: otherwise in the order given). Every
 * dependency of a loaded plugin must be known and loaded too; a cycle is named in full.
 */
export function loadOrder(known: readonly Plugin[], load: ReadonlySet<string>): Plugin[] {
  const byName = new Map<string, Plugin>();
  for (const p of known) {
    if (byName.has(p.name)) throw new PluginOrderError(`plugin ${p.name} is defined twice`);
    byName.set(p.name, p);
  }
  const out: Plugin[] = [];
  const done = new Set<string>();
  const path: string[] = [];
  const visit = (p: Plugin) => {
    if (done.has(p.name)) return;
    const at = path.indexOf(p.name);
    if (at >= 0) {
      throw new PluginOrderError(`plugin dependency cycle: ${[...path.slice(at), p.name].join(' → ')}`);
    }
    path.push(p.name);
    for (const dep of p.dependsOn ?? []) {
      const d = byName.get(dep);
      if (!d) throw new PluginOrderError(`plugin ${p.name} depends on ${dep}, which does not exist`);
      if (!load.has(dep)) {
        throw new PluginOrderError(
          `plugin ${p.name} depends on ${dep}, which is disabled (warren plugin enable ${dep}, or disable ${p.name})`,
        );
      }
      visit(d);
    }
    path.pop();
    done.add(p.name);
    out.push(p);
  };
  for (const p of known) if (load.has(p.name)) visit(p);
  return out;
}
