import { parseArgs } from 'node:util';
import { CONFIG_FILE_ENV, CONFIG_FILE_FLAG, CONFIG_KEYS, KIND_HINT } from '../../config/keys.ts';
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

/** The flags' help: flag, environment variable, what it sets; one line per key. */
export function configFlagsHelp(): string[] {
  const rows: [string, string, string][] = [
    [
      `--${CONFIG_FILE_FLAG} <file>`,
      CONFIG_FILE_ENV,
      'read this file, not <data dir>/warren.config.json|yaml|yml',
    ],
    ...CONFIG_KEYS.map((k): [string, string, string] => [
      `--${k.flag} ${k.hint ?? KIND_HINT[k.kind]}`,
      k.env,
      k.summary,
    ]),
  ];
  const flagWidth = Math.max(...rows.map(([f]) => f.length));
  const envWidth = Math.max(...rows.map(([, e]) => e.length));
  return rows.map(([f, e, s]) => `  ${f.padEnd(flagWidth)}  ${e.padEnd(envWidth)}  ${s}`);
}
