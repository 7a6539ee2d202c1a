/**
 * A GET route's input arrives as a query string: every value is text. Each number and boolean
 * field of every GET syscall (core and plugins) must take its text form, or the REST route
 * (and the web UI that calls it) answers invalid_input to a well-formed request.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { inputFields } from '../../src/surfaces/cli/schema-info.ts';
import { allSyscalls } from '../../src/syscalls/table.ts';

const sample = { number: '5', boolean: 'true' } as const;

it('every number and boolean field of a GET syscall accepts its query-string text', () => {
  const gets = allSyscalls.filter((s) => s.http?.method === 'GET');
  assert.ok(gets.length > 10, 'the table has GET routes');
  const refused: string[] = [];
  for (const s of gets) {
    for (const f of inputFields(s.input)) {
      if (f.kind !== 'number' && f.kind !== 'boolean') continue;
      const parsed = s.input.safeParse({ [f.name]: sample[f.kind] });
      const issue = parsed.success ? undefined : parsed.error.issues.find((i) => i.path[0] === f.name);
      if (issue) refused.push(`${s.name}.${f.name}: ${issue.message}`);
    }
  }
  assert.deepEqual(refused, []);
});
