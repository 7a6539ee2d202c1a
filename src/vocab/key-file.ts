import { readFileSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The operator key's file in a data dir. A module of its own, importing no warren code, because
 * client commands (`warren mcp`, `warren mcp-serve`, every CLI call) read the key and must
 * not load the server's code to learn a file name.
 */
export const OPERATOR_KEY_FILE = 'operator.key';

/**
 * The operator key saved in a data dir (`--data-dir`, else WARREN_DATA_DIR, else ./.warren),
 * or the file it looked for when there is none: what `warren mcp` and `warren mcp-serve` fall
 * back to when given no credential.
 */
export function readOperatorKey(
  dataDir: string | undefined,
  env: Record<string, string | undefined>,
): { key: string } | { missing: string } {
  const file = join(dataDir ?? env.WARREN_DATA_DIR ?? '.warren', OPERATOR_KEY_FILE);
  try {
    return { key: readFileSync(file, 'utf8').trim() };
  } catch {
    return { missing: file };
  }
}
