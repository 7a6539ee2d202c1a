import { writeFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { syscallTable } from '../../syscalls/table.ts';
import { renderReference } from './reference.ts';

export const REFERENCE_PATH = fileURLToPath(new URL('../../../docs/reference.md', import.meta.url));

if (import.meta.url === `file://${process.argv[1]}`) {
  writeFileSync(REFERENCE_PATH, renderReference(syscallTable()));
  console.log(`wrote ${REFERENCE_PATH}`);
}
