import type { Plugin } from '../contract/plugin.ts';
import type { Store } from '../store/store.ts';
import type { WriteTx } from '../store/writer.ts';
import { WarrenError } from '../vocab/errors.ts';

export interface PluginState {
  name: string;
  version: string;
  summary: string;
  required: boolean;
  enabled: boolean;
  dependsOn: readonly string[];
}

/**
 * Which plugins to load: `core` always; an optional plugin if and only if its row in
 * `plugins` says so. A plugin with no row yet gets one, from `seed` (WARREN_PLUGINS or the
 * config file) when given, else enabled; after that the seed is never read again.
 */
export async function readEnablement(
  store: Store,
  known: readonly Plugin[],
  seed: readonly string[] | undefined,
): Promise<Set<string>> {
  const optional = known.filter((p) => !p.required);
  const unknown = seed?.filter((n) => !known.some((p) => p.name === n)) ?? [];
  if (unknown.length > 0) {
    throw new WarrenError(
      'invalid_input',
      `plugins: no plugin named ${unknown.join(', ')} (known: ${optional.map((p) => p.name).join(', ')})`,
    );
  }
  const rows = await store.reader.selectFrom('plugins').select(['name', 'enabled']).execute();
  const missing = optional.filter((p) => !rows.some((r) => r.name === p.name));
  if (missing.length > 0) {
    // Enabled by default only when what it depends on is: a plugin new to a database whose
    // operator disabled its dependency must not stop the server from starting.
    const decided = new Map(rows.map((r) => [r.name, r.enabled === 1]));
    const isOn = (name: string, path: readonly string[] = []): boolean => {
      const p = known.find((k) => k.name === name);
      // An unknown dependency or a cycle: left for the load order to name as the start-up error.
      if (!p || path.includes(name)) return true;
      if (p.required) return true;
      const stored = decided.get(name);
      if (stored !== undefined) return stored;
      const on =
        seed === undefined ? (p.dependsOn ?? []).every((d) => isOn(d, [...path, name])) : seed.includes(name);
      decided.set(name, on);
      return on;
    };
    await store.writer.write(async (tx) => {
      for (const p of missing) {
        // Another node seeding the same database at the same moment wins: its row stands.
        await writeRow(tx, p.name, isOn(p.name), 'seed', false);
      }
    });
  }
  const now = await store.reader.selectFrom('plugins').select(['name', 'enabled']).execute();
  const on = new Set(known.filter((p) => p.required).map((p) => p.name));
  for (const r of now) if (r.enabled === 1 && known.some((p) => p.name === r.name)) on.add(r.name);
  return on;
}

/** Persist an optional plugin's enablement (takes effect at the next start). */
export async function setEnabled(store: Store, plugin: Plugin, enabled: boolean, by: string): Promise<void> {
  await store.writer.write(async (tx) => {
    await writeRow(tx, plugin.name, enabled, by, true);
    tx.append({
      zone: 'default',
      type: enabled ? 'plugin.enabled' : 'plugin.disabled',
      actor: by,
      payload: { plugin: plugin.name, takesEffect: 'restart' },
    });
  });
}

/** A plugin's row: inserted, or (with `overwrite`) updated where it exists. */
async function writeRow(tx: WriteTx, name: string, enabled: boolean, by: string, overwrite: boolean) {
  const on = enabled ? 1 : 0;
  await tx.db
    .insertInto('plugins')
    .values({ name, enabled: on, version: null, updated_by: by, updated_at: tx.now })
    .onConflict((oc) =>
      overwrite
        ? oc.column('name').doUpdateSet({ enabled: on, updated_by: by, updated_at: tx.now })
        : oc.column('name').doNothing(),
    )
    .execute();
}

/** Record the version each loaded plugin ran with. */
export async function recordLoaded(store: Store, loaded: readonly Plugin[]): Promise<void> {
  await store.writer.write(async (tx) => {
    for (const p of loaded) {
      if (p.required) continue;
      await tx.db.updateTable('plugins').set({ version: p.version }).where('name', '=', p.name).execute();
    }
  });
}
