import { parseArgs } from 'node:util';
import { CONFIG_FILE_FLAG, CONFIG_KEYS, KIND_HINT } from '../../config/keys.ts';
import { UsageError } from './errors.ts';

/**
 * The configuration flags `warren serve` and `warren config show` share, one per key of the
 * key table, plus `--config <file>`. Values stay text here; src/config/ reads and checks them
 * (so this file loads no zod and `warren --help` stays light).
 */

export interface ConfigArgs {
  /** Flag name → text, only for flags given. */
  flags: Record<string, string>;
  configFile?: string;
  /** The command's own boolean switches (`--demo`, `--json`). */
  switches: Record<string, boolean>;
}

export function parseConfigArgs(args: string[], switches: readonly string[], command: string[]): ConfigArgs {
  const options: Record<string, { type: 'string' | 'boolean' }> = {
    [CONFIG_FILE_FLAG]: { type: 'string' },
  };
  for (const key of CONFIG_KEYS) options[key.flag] = { type: 'string' };
  for (const s of switches) options[s] = { type: 'boolean' };
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({ args, options, strict: true, allowPositionals: false }));
  } catch (error) {
    // parseArgs says what was wrong ("Unknown option '--max-depht'"); the hint points at the list.
    throw new UsageError((error as Error).message, command);
  }
  const flags: Record<string, string> = {};
  for (const key of CONFIG_KEYS) {
    const v = values[key.flag];
    if (typeof v === 'string') flags[key.flag] = v;
  }
  const configFile = values[CONFIG_FILE_FLAG];
  return {
    flags,
    ...(typeof configFile === 'string' ? { configFile } : {}),
    switches: Object.fromEntries(switches.map((s) => [s, values[s] === true])),
  };
}

/** The flags' help: one line per key, with its environment variable. */
export function configFlagsHelp(): string[] {
  const rows = [
    [
      `--${CONFIG_FILE_FLAG} <file>`,
      'read this config file (env WARREN_CONFIG; default <data dir>/warren.config.json|yaml|yml)',
    ],
    ...CONFIG_KEYS.map((k) => [`--${k.flag} ${KIND_HINT[k.kind]}`, `${k.summary} (env ${k.env})`]),
  ];
  const width = Math.max(...rows.map(([l]) => l!.length));
  return rows.map(([l, r]) => `  ${l!.padEnd(width)}  ${r}`);
}
