import { readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';

/**
 * The operator key's file in a data dir. A module of its own, importing no warren code, because
 * client commands (`warren mcp`, `warren mcp-serve`, every CLI call) read the key and must
 * not load the server's code to learn a file name.
 */
export const OPERATOR_KEY_FILE = 'operator.key';

/**
 * The operator key saved in a data dir (`dataDir`, else WARREN_DATA_DIR, else ./.warren, from
 * `cwd`), or the file it looked for (as the data dir names it) when there is none or it is
 * empty: what the CLI falls back to when given no key.
 */
export function readOperatorKey(
  dataDir: string | undefined,
  env: Readonly<Record<string, string | undefined>>,
  cwd: string,
): { key: string } | { missing: string } {
  const file = join(dataDir ?? env.WARREN_DATA_DIR ?? '.warren', OPERATOR_KEY_FILE);
  let key = '';
  try {
    key = readFileSync(resolve(cwd, file), 'utf8').trim();
  } catch {
    // Missing or unreadable: the caller says where it looked.
  }
  return key ? { key } : { missing: file };
}
