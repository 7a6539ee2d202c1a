import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { OPERATOR_KEY_FILE } from '../../vocab/key-file.ts';
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

/** Flag, then environment, then the key file the server writes on first start. */
export function resolveEndpoint(globals: Globals, io: CliIO): Endpoint {
  const url = globals.url ?? io.env.WARREN_URL ?? DEFAULT_URL;
  const zone = globals.zone ?? io.env.WARREN_ZONE;
  const key = globals.key ?? io.env.WARREN_API_KEY ?? readKeyFile(globals, io);
  return { url, key, ...(zone ? { zone } : {}) };
}

function readKeyFile(globals: Globals, io: CliIO): string {
  const dataDir = globals['data-dir'] ?? io.env.WARREN_DATA_DIR ?? '.warren';
  const file = resolve(io.cwd ?? process.cwd(), dataDir, OPERATOR_KEY_FILE);
  let key = '';
  try {
    key = readFileSync(file, 'utf8').trim();
  } catch {
    // Fall through to the message below, which says everywhere we looked.
  }
  if (!key) {
    throw new CliError(
      `no API key: looked for --key, env WARREN_API_KEY and the file ${file}. ` +
        'Start the server once with `warren serve` (it writes that file), or pass --key / --data-dir.',
    );
  }
  return key;
}
