import { TIERS, type Tier } from '../contract/tiers.ts';
import type { SyscallTable } from '../syscalls/dispatch.ts';
import { Gate } from '../syscalls/gate.ts';
import { WarrenError } from '../vocab/errors.ts';
import { ConfigError } from './errors.ts';
import type { ResolvedConfig, Setting } from './resolve.ts';

/**
 * The tool set of each depth tier, as configured: the tier's list (or the syscall table's
 * default), narrowed by the default grants. Grants apply to every session, so folding them
 * into the tiers once is the same as applying them at every spawn, and the kernel's one
 * gating path stays as it is.
 */
export function effectiveTiers(config: ResolvedConfig, table: SyscallTable): Record<Tier, string[]> {
  const sessionTools = [...table.values()].filter((s) => s.callers.includes('session')).map((s) => s.name);
  const configured: Partial<Record<Tier, readonly string[]>> = {};
  for (const tier of TIERS) {
    const setting = config.settings.get(`tiers.${tier}`)!;
    if (setting.value === null) continue;
    configured[tier] = checkNames(setting, sessionTools);
  }
  const gate = new Gate(table, { tiers: configured });
  const grants = grantsOf(config);
  const out = {} as Record<Tier, string[]>;
  TIERS.forEach((tier, depth) => {
    try {
      out[tier] = gate.forSpawn(depth, null, undefined, grants);
    } catch (error) {
      if (!(error instanceof WarrenError)) throw error;
      const origins = ['grants.allow', 'grants.deny']
        .map((p) => config.settings.get(p)!.origin)
        .filter(Boolean);
      throw new ConfigError(`${origins.join(' / ')}: ${error.message}`);
    }
  });
  return out;
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
