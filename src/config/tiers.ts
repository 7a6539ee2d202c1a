import { TIERS, type Tier } from '../contract/tiers.ts';
import type { SyscallTable } from '../syscalls/dispatch.ts';
import { Gate, type GatingPolicy } from '../syscalls/gate.ts';
import { WarrenError } from '../vocab/errors.ts';
import { ConfigError } from './errors.ts';
import type { ResolvedConfig, Setting } from './resolve.ts';

/** What the config says about tools: the depth-tier policy where set, and the default grants. */
export interface ConfiguredGating {
  /** What `Warren.open` takes: the tiers that are set (the rest follow jobs), the grants. */
  policy: GatingPolicy;
  /** Each tier's tools after grants, as `config show` prints them; null: set by jobs (docs/mcp.md). */
  tiers: Record<Tier, string[] | null>;
}

/**
 * The tool policy as configured. Sessions get their job's default set (docs/mcp.md); a tier
 * given in `tiers.*` is the depth-tier policy, which replaces the job defaults at its depth.
 * The default grants narrow every session's set. Names are checked against the syscall
 * table, and bad grant patterns are named by where they were set.
 */
export function configuredGating(config: ResolvedConfig, table: SyscallTable): ConfiguredGating {
  const sessionTools = [...table.values()].filter((s) => s.callers.includes('session')).map((s) => s.name);
  const configured: Partial<Record<Tier, readonly string[]>> = {};
  for (const tier of TIERS) {
    const setting = config.settings.get(`tiers.${tier}`)!;
    if (setting.value === null) continue;
    configured[tier] = checkNames(setting, sessionTools);
  }
  const grants = grantsOf(config);
  const policy: GatingPolicy = {
    ...(Object.keys(configured).length > 0 ? { tiers: configured } : {}),
    ...(grants.allow || grants.deny ? { grants } : {}),
  };
  const gate = new Gate(table, policy);
  const tiers = {} as Record<Tier, string[] | null>;
  TIERS.forEach((tier, depth) => {
    try {
      tiers[tier] = configured[tier] ? gate.forSpawn({ depth }, null) : null;
      // A bad pattern fails here, at load, not at the first spawn.
      gate.forSpawn({ depth: 1 }, null);
    } catch (error) {
      if (!(error instanceof WarrenError)) throw error;
      const origins = ['grants.allow', 'grants.deny']
        .map((p) => config.settings.get(p)!.origin)
        .filter(Boolean);
      throw new ConfigError(`${origins.join(' / ')}: ${error.message}`);
    }
  });
  return { policy, tiers };
}

function checkNames(setting: Setting, known: readonly string[]): string[] {
  const names = setting.value as string[];
  const unknown = names.filter((n) => !known.includes(n));
  if (unknown.length > 0) {
    throw new ConfigError(
      `${setting.origin}: ${unknown.map((n) => JSON.stringify(n)).join(', ')} ${unknown.length > 1 ? 'are not tools' : 'is not a tool'} a session can call; expected names from: ${known.join(', ')}`,
    );
  }
  return names;
}

function grantsOf(config: ResolvedConfig): { allow?: string[]; deny?: string[] } {
  const allow = config.settings.get('grants.allow')!.value as string[] | null;
  const deny = config.settings.get('grants.deny')!.value as string[] | null;
  return { ...(allow ? { allow } : {}), ...(deny ? { deny } : {}) };
}
