import assert from 'node:assert/strict';
import { it } from 'node:test';
import { splitCommandLine } from '../../src/runtimes/process.ts';

it('splits a command line like a shell would, without a shell', () => {
  assert.deepEqual(splitCommandLine('python3 agent.py'), ['python3', 'agent.py']);
  assert.deepEqual(splitCommandLine(`  node -e "console.log('a b')"  x `), [
    'node',
    '-e',
    "console.log('a b')",
    'x',
  ]);
  assert.deepEqual(splitCommandLine(`echo 'it''s' "" a\\ b`), ['echo', 'its', '', 'a b']);
  assert.deepEqual(splitCommandLine('say "a \\"quoted\\" word"'), ['say', 'a "quoted" word']);
  assert.throws(() => splitCommandLine('echo "open'), { code: 'invalid_input' });
});
