/**
 * Globs where `*` matches any run of characters and every other character is itself.
 * Matched without regular expressions: a greedy scan that only ever returns to the last `*`
 * seen, so the worst case is O(pattern × text) steps, never exponential. Patterns come
 * from callers (grants), so their length is capped too.
 */
export const MAX_GLOB_LENGTH = 256;

export class GlobTooLongError extends Error {
  readonly code = 'glob_too_long';
  constructor(readonly length: number) {
    super(`a pattern may be at most ${MAX_GLOB_LENGTH} characters; this one is ${length}`);
    this.name = 'GlobTooLongError';
  }
}

export function globMatch(pattern: string, text: string): boolean {
  let p = 0;
  let t = 0;
  let star = -1; // the last `*` seen in the pattern
  let resume = 0; // where in the text that `*` is to take one more character from
  while (t < text.length) {
    if (p < pattern.length && pattern[p] === '*') {
      star = p++;
      resume = t;
    } else if (p < pattern.length && pattern[p] === text[t]) {
      p++;
      t++;
    } else if (star >= 0) {
      // An earlier `*` can never need to take back what a later one took: only retry the last.
      p = star + 1;
      t = ++resume;
    } else return false;
  }
  while (pattern[p] === '*') p++;
  return p === pattern.length;
}

/** A matcher for one pattern, refusing patterns over the length cap. */
export function compileGlob(pattern: string): (text: string) => boolean {
  if (pattern.length > MAX_GLOB_LENGTH) throw new GlobTooLongError(pattern.length);
  return (text) => globMatch(pattern, text);
}
