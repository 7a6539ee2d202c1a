import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

/** A fresh directory removed on dispose (`using tmp = tempDir()`), so a failed bench leaves nothing. */
export function tempDir(prefix = 'warren-bench-'): { dir: string; [Symbol.dispose](): void } {
  const dir = mkdtempSync(join(tmpdir(), prefix));
  return { dir, [Symbol.dispose]: () => rmSync(dir, { recursive: true, force: true }) };
}
