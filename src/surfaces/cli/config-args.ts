import { CONFIG_FILE_ENV, CONFIG_FILE_FLAG, CONFIG_KEYS, KIND_HINT } from '../../config/keys.ts';
import { type OptionSpec, preamble } from './preamble.ts';
import type { CliIO } from './types.ts';

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

export function parseConfigArgs(
  args: string[],
  io: CliIO,
  switches: readonly string[],
  command: string[],
): ConfigArgs {
  const options: Record<string, OptionSpec> = {
    [CONFIG_FILE_FLAG]: { type: 'string' },
  };
  for (const key of CONFIG_KEYS) options[key.flag] = { type: 'string' };
  for (const s of switches) options[s] = { type: 'boolean' };
  const values = preamble(args, io, { words: command, options }).values as Record<
    string,
    string | boolean | undefined
  >;
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
