import { existsSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

/**
 * warren's own package directory (where bin/, examples/ and docs/ are), found by walking up
 * from the calling module to the package.json named `warren`. Paths relative to a module's
 * own URL break once the server is bundled into one file (dist/app/server.cjs), and differ
 * between src/ and dist/; this answer is the same from all three.
 */
export function packageRoot(from: string | URL): string {
  let dir = dirname(typeof from === 'string' && !from.startsWith('file:') ? from : fileURLToPath(from));
  for (;;) {
    const manifest = join(dir, 'package.json');
    if (existsSync(manifest) && isWarren(manifest)) return dir;
    const up = dirname(dir);
    if (up === dir) throw new Error(`warren: no package.json named warren above ${String(from)}`);
    dir = up;
  }
}

function isWarren(path: string): boolean {
  try {
    return (JSON.parse(readFileSync(path, 'utf8')) as { name?: unknown }).name === 'warren';
  } catch {
    return false;
  }
}
