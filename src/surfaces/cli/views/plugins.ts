import type { PluginListing } from '../../../contract/plugin.ts';
import { renderTable } from '../table.ts';
import { type View, view } from './format.ts';

/** Plugins: what the database enables and what this server loaded. */

const state = (p: PluginListing): string => {
  if (p.required) return 'always';
  if (p.enabled === p.loaded) return p.enabled ? 'enabled' : 'disabled';
  // The database changed since this server started: say what a restart will do.
  return p.enabled ? 'enabled (loads on restart)' : 'disabled (unloads on restart)';
};

const list = view<{ plugins: PluginListing[] }>((out, ctx) =>
  renderTable(
    ['Name', 'State', 'Loaded', 'Version', 'Depends on', 'Summary'],
    out.plugins.map((p) => [
      p.name,
      state(p),
      p.loaded ? 'yes' : 'no',
      p.version,
      p.dependsOn.join(', '),
      p.summary,
    ]),
    ctx,
  ),
);

const toggle = view<{ message: string }>((out) => `${out.message}\n`);

export const pluginViews: Record<string, View> = {
  plugin_list: list,
  plugin_enable: toggle,
  plugin_disable: toggle,
};
