import type { Plugin, PluginListing } from '../contract/plugin.ts';
import type { Store } from '../store/store.ts';
import { WarrenError } from '../vocab/errors.ts';
import { setEnabled } from './enablement.ts';

/** Every known plugin: whether the database enables it and whether this server loaded it. */
/** The plugins a build knows and the ones this server loaded (the host's view). */
export interface Known {
  readonly known: readonly Plugin[];
  readonly loaded: readonly Plugin[];
}

export async function listPlugins(store: Store, host: Known): Promise<PluginListing[]> {
  const rows = await store.reader.selectFrom('plugins').select(['name', 'enabled', 'version']).execute();
  return host.known.map((p) => {
    const row = rows.find((r) => r.name === p.name);
    return {
      name: p.name,
      version: p.version,
      summary: p.summary,
      required: p.required === true,
      enabled: p.required === true || row?.enabled === 1,
      loaded: host.loaded.includes(p),
      dependsOn: [...(p.dependsOn ?? [])],
      loadedVersion: p.required ? p.version : (row?.version ?? null),
    };
  });
}

/**
 * Enable or disable an optional plugin, persisted; it takes effect when the server next
 * starts. Refused when it would leave a plugin set that cannot start: enabling one whose
 * dependency is disabled, or disabling one an enabled plugin depends on.
 */
export async function togglePlugin(
  store: Store,
  host: Known,
  name: string,
  enabled: boolean,
  by: string,
  opts: { withDependents?: boolean } = {},
): Promise<PluginListing & { restartRequired: boolean; message: string; alsoDisabled: string[] }> {
  const plugin = host.known.find((p) => p.name === name);
  if (!plugin) {
    throw new WarrenError('not_found', `no plugin named ${JSON.stringify(name)}`, {
      what: 'plugin',
      id: name,
      known: host.known.map((p) => p.name),
    });
  }
  if (plugin.required)
    throw new WarrenError('forbidden', `${name} is the kernel itself and cannot be disabled`);
  const listing = await listPlugins(store, host);
  const isOn = (p: Plugin) => listing.find((l) => l.name === p.name)?.enabled === true;
  if (enabled) {
    const off = (plugin.dependsOn ?? []).filter((d) => !listing.find((l) => l.name === d)?.enabled);
    if (off.length > 0) {
      throw new WarrenError(
        'conflict',
        `${name} depends on ${off.join(', ')}: enable ${off.length > 1 ? 'them' : 'it'} first`,
      );
    }
  }
  // Disabling: the enabled plugins that depend on it, directly or through another, go first.
  const dependents: Plugin[] = [];
  if (!enabled) {
    const visit = (n: string) => {
      for (const p of host.known) {
        if (isOn(p) && (p.dependsOn ?? []).includes(n) && !dependents.includes(p)) {
          visit(p.name);
          dependents.push(p);
        }
      }
    };
    visit(name);
    if (dependents.length > 0 && !opts.withDependents) {
      const users = dependents.map((p) => p.name);
      throw new WarrenError(
        'conflict',
        `${users.join(', ')} depend${users.length > 1 ? '' : 's'} on ${name}: disable ${users.length > 1 ? 'them' : 'it'} first, or pass withDependents (--with-dependents) to disable ${users.length > 1 ? 'them' : 'it'} with it`,
        { dependents: users },
      );
    }
  }
  for (const p of dependents) await setEnabled(store, p, false, by);
  await setEnabled(store, plugin, enabled, by);
  const after = (await listPlugins(store, host)).find((l) => l.name === name)!;
  const restartRequired = after.loaded !== enabled;
  return {
    ...after,
    alsoDisabled: dependents.map((p) => p.name),
    restartRequired,
    message: restartRequired
      ? `${name} ${enabled ? 'enabled' : 'disabled'}${dependents.length > 0 ? ` with ${dependents.map((p) => p.name).join(', ')}` : ''}; restart the server for it to take effect`
      : `${name} is already ${enabled ? 'enabled and loaded' : 'disabled and not loaded'}`,
  };
}
