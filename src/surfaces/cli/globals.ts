import { resolve } from 'node:path';
import { readOperatorKey } from '../../vocab/key-file.ts';
import { CliError } from './errors.ts';
import type { CliIO } from './types.ts';

/** Options every command takes: where the server is, who we are, how to print. */
export const GLOBAL_OPTIONS = {
  url: { type: 'string', help: 'Server URL (env WARREN_URL, default http://127.0.0.1:7700)' },
  key: { type: 'string', help: 'Operator API key (env WARREN_API_KEY, default <data-dir>/operator.key)' },
  zone: { type: 'string', help: 'Zone to act in (env WARREN_ZONE)' },
  'data-dir': {
    type: 'string',
    help: 'Where the operator key lives (env WARREN_DATA_DIR, default ./.warren)',
  },
  json: { type: 'boolean', help: 'Print the raw output JSON instead of a table' },
  help: { type: 'boolean', short: 'h', help: 'Show help' },
} as const;

export type GlobalName = keyof typeof GLOBAL_OPTIONS;
export const GLOBAL_NAMES = Object.keys(GLOBAL_OPTIONS) as GlobalName[];

export interface Globals {
  url?: string;
  key?: string;
  zone?: string;
  'data-dir'?: string;
  json?: boolean;
  help?: boolean;
}

export const DEFAULT_URL = 'http://127.0.0.1:7700';

export interface Endpoint {
  url: string;
  key: string;
  zone?: string;
}

/** The server: --url, else WARREN_URL, else the default. */
export const serverUrl = (globals: Globals, io: CliIO): string =>
  globals.url ?? io.env.WARREN_URL ?? DEFAULT_URL;

/** The zone to act in: --zone, else WARREN_ZONE, else none (the credential's own). */
export const zoneOf = (globals: Globals, io: CliIO): string | undefined => globals.zone ?? io.env.WARREN_ZONE;

/**
 * The operator key: --key, else WARREN_API_KEY, else the key file the server writes on first
 * start in the data dir (--data-dir, else WARREN_DATA_DIR, else ./.warren). An empty one is
 * none; `missing` names the file looked for, as the data dir names it.
 */
export function operatorKey(globals: Globals, io: CliIO): { key: string } | { missing: string } {
  const given = globals.key || io.env.WARREN_API_KEY;
  if (given) return { key: given };
  return readOperatorKey(globals['data-dir'], io.env, io.cwd ?? process.cwd());
}

/** Flag, then environment, then the key file the server writes on first start. */
export function resolveEndpoint(globals: Globals, io: CliIO): Endpoint {
  const url = serverUrl(globals, io);
  const zone = zoneOf(globals, io);
  const key = operatorKey(globals, io);
  if ('missing' in key) {
    const file = resolve(io.cwd ?? process.cwd(), key.missing);
    throw new CliError(
      `no API key: looked for --key, env WARREN_API_KEY and the file ${file}. ` +
        'Start the server once with `warren serve` (it writes that file), or pass --key / --data-dir.',
    );
  }
  return { url, key: key.key, ...(zone ? { zone } : {}) };
}
