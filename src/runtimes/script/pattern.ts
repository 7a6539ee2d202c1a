import { createRequire } from 'node:module';
import { RE2JS } from 're2js';

/**
 * `wait.match` patterns are RE2 syntax, matched by re2js (a pure-JavaScript port of RE2): time
 * linear in the input, whatever the pattern, so no pattern backtracks. RE2 has no
 * backreferences and no lookaround; such a pattern is refused when the script is given.
 */

/** Why `pattern` is not an RE2 pattern warren accepts, or undefined when it is. */
export function patternError(pattern: string): string | undefined {
  try {
    RE2JS.compile(pattern);
    return undefined;
  } catch (error) {
    return `not a valid RE2 pattern (no backreferences, no lookaround): ${(error as Error).message}`;
  }
}

/** The CommonJS entry of re2js, for the match worker's `require` (an eval worker resolves from no file). */
export function re2jsEntry(): string {
  return createRequire(import.meta.url).resolve('re2js');
}
