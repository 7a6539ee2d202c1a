import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { it } from 'node:test';
import { renderReference } from '../../src/surfaces/docs/reference.ts';
import { REFERENCE_PATH } from '../../src/surfaces/docs/write.ts';
import { syscallTable } from '../../src/syscalls/table.ts';

it('docs/reference.md is generated from the current syscall table (run `npm run docs`)', () => {
  const table = syscallTable();
  const current = readFileSync(REFERENCE_PATH, 'utf8');
  assert.equal(current, renderReference(table));
  for (const name of table.keys()) assert.ok(current.includes(`### \`${name}\``), name);
});
