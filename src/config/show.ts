import type { Tier } from '../contract/tiers.ts';
import { CONFIG_KEYS } from './keys.ts';
import type { LoadedConfig } from './load.ts';
import type { Source } from './resolve.ts';

/** The effective configuration as `warren config show` reports it: every key, its value and where it came from. */
export interface ShownSetting {
  /** What the server runs with (a derived node id, the db path, a tier's tools after grants). */
  value: unknown;
  source: Source;
  /** The file and key, the variable or the flag; for defaults, what the default is made of. */
  from: string | null;
  env: string;
  flag: string;
}

export interface ShownConfig {
  file: string | null;
  settings: Record<string, ShownSetting>;
}

export function showConfig(loaded: LoadedConfig): ShownConfig {
  const settings: Record<string, ShownSetting> = {};
  const grantsSet = ['grants.allow', 'grants.deny'].some(
    (p) => loaded.resolved.settings.get(p)!.value !== null,
  );
  for (const key of CONFIG_KEYS) {
    const s = loaded.resolved.settings.get(key.path)!;
    let value = s.value;
    let from = s.origin;
    if (key.path === 'server.db' && value === null) {
      value = loaded.db;
      from = '<data dir>/warren.db';
    } else if (key.path === 'nodeId' && s.source === 'default') {
      value = loaded.nodeId;
      from = 'derived from the data dir and database';
    } else if (key.path.startsWith('tiers.')) {
      value = loaded.tiers[key.path.slice('tiers.'.length) as Tier];
      from = [
        s.source === 'default' ? 'not set: sessions follow their jobs' : s.origin,
        value && grantsSet ? 'narrowed by grants' : '',
      ]
        .filter(Boolean)
        .join(', ');
    }
    settings[key.path] = { value, source: s.source, from, env: key.env, flag: `--${key.flag}` };
  }
  return { file: loaded.resolved.file, settings };
}
