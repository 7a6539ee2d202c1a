import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Gate } from '../../src/syscalls/gate.ts';
import { compileGlob, GlobTooLongError, globMatch, globSteps, MAX_GLOB_LENGTH } from '../../src/util/glob.ts';
import { WarrenError } from '../../src/vocab/errors.ts';

/**
 * The attack (issue 7): a grant glob with many `*`, compiled to a regex, backtracked
 * catastrophically. Then (issue 25) 3,000 route globs of O(pattern × text) each cost 0.4–0.8 s
 * per inbound message. The matcher is now linear: O(pattern + text), counted, not timed.
 */

/** The definition, by dynamic programming (O(pattern × text)): what the matcher must agree with. */
function reference(pattern: string, text: string): boolean {
  let row = Array.from({ length: text.length + 1 }, (_, j) => j === 0);
  for (const c of pattern) {
    const next = new Array<boolean>(text.length + 1).fill(false);
    next[0] = c === '*' && row[0]!;
    for (let j = 1; j <= text.length; j++)
      next[j] = c === '*' ? row[j]! || next[j - 1]! : row[j - 1]! && text[j - 1] === c;
    row = next;
  }
  return row[text.length]!;
}

/** A deterministic generator (mulberry32). */
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}
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

  it('many stars against a long run that does not match: linear and correct', () => {
    const pattern = '*a*a*a*a*a*a*a*a*a*a*b';
    const text = 'a'.repeat(100_000);
    assert.equal(globMatch(pattern, text), false);
    assert.equal(globMatch(pattern, `${text}b`), true);
    assert.equal(globMatch(pattern, `${'a'.repeat(9)}b`), false, 'ten a’s are needed');
    assert.equal(globMatch(`${'*a'.repeat(120)}*b`, text), false);
    // Fast because linear: the characters looked at, counted (the time is bench's: globStars).
    for (const [p, t] of [
      [pattern, text],
      [pattern, `${text}b`],
      [`${'*a'.repeat(120)}*b`, text],
    ] as const) {
      const steps = globSteps(p, t);
      assert.ok(steps <= 2 * t.length + p.length, `${steps} characters looked at for ${t.length}`);
    }
  });

  it('agrees with the definition on 20,000 random patterns and texts over a small alphabet', () => {
    const r = rng(25);
    const draw = (alphabet: string, max: number) =>
      Array.from(
        { length: Math.floor(r() * (max + 1)) },
        () => alphabet[Math.floor(r() * alphabet.length)],
      ).join('');
    for (let i = 0; i < 20_000; i++) {
      const pattern = draw('ab*', 8);
      const text = draw('ab', 10);
      assert.equal(globMatch(pattern, text), reference(pattern, text), `${pattern} vs ${text}`);
      assert.equal(compileGlob(pattern)(text), reference(pattern, text), `${pattern} vs ${text} (compiled)`);
    }
  });

  it('looks at each character a bounded number of times, whatever the glob (the route attack)', () => {
    const text = `${'a'.repeat(299)}b`;
    const worst = [
      `*${'a'.repeat(150)}b`, // a backtracking matcher retried this from ~150 starts
      `*${'a'.repeat(150)}c`,
      `*${'a'.repeat(150)}c*`,
      `${'*a'.repeat(120)}*c`,
      `*${'ab'.repeat(60)}*`,
      `*${'a'.repeat(60)}*${'a'.repeat(60)}b*${'a'.repeat(60)}c`,
    ];
    for (const pattern of worst) {
      for (const t of [text, 'a'.repeat(300), 'ab'.repeat(150), `${'a'.repeat(150)}c${'a'.repeat(149)}`]) {
        const steps = globSteps(pattern, t);
        assert.equal(
          globMatch(pattern, t),
          reference(pattern, t),
          `${pattern.slice(0, 20)}… vs ${t.slice(0, 20)}…`,
        );
        assert.ok(
          steps <= 2 * t.length + pattern.length,
          `${pattern.slice(0, 20)}… looked at ${steps} characters of a ${t.length}-character text`,
        );
      }
    }
  });

  it('caps pattern length, and grants over the cap are invalid input', () => {
    assert.ok(compileGlob('x'.repeat(MAX_GLOB_LENGTH))('x'.repeat(MAX_GLOB_LENGTH)));
    assert.throws(() => compileGlob('x'.repeat(MAX_GLOB_LENGTH + 1)), GlobTooLongError);
    const gate = new Gate(new Map());
    assert.throws(
      () => gate.forSpawn({ depth: 1 }, null, undefined, { allow: ['*'.repeat(MAX_GLOB_LENGTH + 1)] }),
      (e) => e instanceof WarrenError && e.code === 'invalid_input',
    );
    assert.deepEqual(gate.forSpawn({ depth: 1 }, null, undefined, { allow: ['*a*a*a*a*a*a*a*a*a*a*b'] }), []);
  });
});
