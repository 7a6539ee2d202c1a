import { CONFIG_KEYS } from './keys.ts';

/**
 * Seed 003's (the coordinator's) names for settings warren already has, read as aliases while
 * the coordinator plugin is enabled. They sit below warren's own names: a flag, a `WARREN_*`
 * variable or the config file that sets the key wins, and an alias only fills a key nothing
 * else set. "Enabled" is decided by the configuration (`plugins.enable` unset, or naming
 * `coordinator`), not by the database: the port and the database are chosen before the
 * database is opened. `REDIS_URL` is the coordinator's own (src/plugins/coordinator/env.ts);
 * seed 003's `STS_URL` has no equivalent (docs/coordinator.md).
 */
export const COORDINATOR_ALIASES: Readonly<Record<string, string>> = {
  PORT: 'server.port',
  DATABASE_URL: 'server.db',
  DB_POOL_MAX: 'server.dbPoolMax',
};

export const COORDINATOR_PLUGIN = 'coordinator';

/** The alias variables to read for a configuration whose `plugins.enable` is `enabled`. */
export function aliasesInForce(
  enabled: readonly string[] | null,
): ReadonlyArray<{ alias: string; path: string; env: string }> {
  if (enabled !== null && !enabled.includes(COORDINATOR_PLUGIN)) return [];
  return Object.entries(COORDINATOR_ALIASES).map(([alias, path]) => ({
    alias,
    path,
    env: CONFIG_KEYS.find((k) => k.path === path)!.env,
  }));
}
