import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Gate } from '../../src/syscalls/gate.ts';
import { compileGlob, GlobTooLongError, globMatch, MAX_GLOB_LENGTH } from '../../src/util/glob.ts';
import { WarrenError } from '../../src/vocab/errors.ts';

/**
 * The attack (issue 7): a grant glob with many `*`, compiled to a regex, backtracked
 * catastrophically. The matcher is O(pattern × text) and patterns are length-capped.
 */
describe('globs', () => {
  it('matches a table of cases', () => {
    const cases: Array<[string, string, boolean]> = [
      ['', '', true],
      ['', 'a', false],
      ['*', '', true],
      ['*', 'anything at all', true],
      ['**', 'x', true],
      ['ipc_*', 'ipc_write', true],
      ['ipc_*', 'ipc_', true],
      ['ipc_*', 'xipc_write', false],
      ['*_write', 'ipc_write', true],
      ['*_write', 'ipc_write2', false],
      ['ipc_*_stream', 'ipc_share_stream', true],
      ['ipc_*_stream', 'ipc_stream', false],
      ['a*b*c', 'abc', true],
      ['a*b*c', 'aXbYc', true],
      ['a*b*c', 'aXcYb', false],
      ['a*a*a', 'aa', false],
      ['a*a*a', 'aaa', true],
      ['*ab*ab', 'abababab', true],
      ['*ab*ab', 'ababa', false],
      ['exact', 'exact', true],
      ['exact', 'exac', false],
      ['exact', 'exactly', false],
      // Everything but `*` is literal: no regex or glob syntax leaks through.
      ['a.c', 'abc', false],
      ['a.c', 'a.c', true],
      ['a?c', 'abc', false],
      ['[ab]', 'a', false],
      ['[ab]', '[ab]', true],
      ['(a|b)', '(a|b)', true],
      ['^a$', '^a$', true],
      ['a\\*', 'a\\xyz', true],
      ['*\n*', 'x\ny', true],
    ];
    for (const [pattern, text, want] of cases) {
      assert.equal(globMatch(pattern, text), want, `${JSON.stringify(pattern)} vs ${JSON.stringify(text)}`);
    }
  });

  it('many stars against a long run that does not match: fast and correct', () => {
    const pattern = '*a*a*a*a*a*a*a*a*a*a*b';
    const text = 'a'.repeat(100_000);
    const t = Date.now();
    assert.equal(globMatch(pattern, text), false);
    assert.equal(globMatch(pattern, `${text}b`), true);
    assert.equal(globMatch(pattern, `${'a'.repeat(9)}b`), false, 'ten a’s are needed');
    assert.equal(globMatch(`${'*a'.repeat(120)}*b`, text), false);
    assert.ok(Date.now() - t < 1000, `took ${Date.now() - t} ms`);
  });

  it('caps pattern length, and grants over the cap are invalid input', () => {
    assert.ok(compileGlob('x'.repeat(MAX_GLOB_LENGTH))('x'.repeat(MAX_GLOB_LENGTH)));
    assert.throws(() => compileGlob('x'.repeat(MAX_GLOB_LENGTH + 1)), GlobTooLongError);
    const gate = new Gate(new Map());
    assert.throws(
      () => gate.forSpawn(1, null, undefined, { allow: ['*'.repeat(MAX_GLOB_LENGTH + 1)] }),
      (e) => e instanceof WarrenError && e.code === 'invalid_input',
    );
    assert.deepEqual(gate.forSpawn(1, null, undefined, { allow: ['*a*a*a*a*a*a*a*a*a*a*b'] }), []);
  });
});
