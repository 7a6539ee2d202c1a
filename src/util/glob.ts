/**
 * Globs where `*` matches any run of characters and every other character is itself.
 * Matched without regular expressions and without backtracking: a glob is its literal
 * head, its literal tail and the literal pieces between its stars; a text matches when it
 * starts with the head, ends with the tail, and holds the pieces in order between them. The
 * leftmost place of each piece is as good as any later one (a star takes whatever lies
 * between), so each piece is searched once, from where the last one ended, with
 * Knuth–Morris–Pratt: every character of the text is looked at a bounded number of times.
 * Work is O(pattern + text) whatever either holds (patterns come from callers: grants,
 * routes), and their length is capped too.
 */
export const MAX_GLOB_LENGTH = 256;

export class GlobTooLongError extends Error {
  readonly code = 'glob_too_long';
  constructor(readonly length: number) {
    super(`a pattern may be at most ${MAX_GLOB_LENGTH} characters; this one is ${length}`);
    this.name = 'GlobTooLongError';
  }
}

/** One literal piece between stars, with its KMP failure table. */
interface Piece {
  text: string;
  /** fail[i]: the length of the longest proper prefix of text[0..i] that is also its suffix. */
  fail: Int32Array;
}

/** A glob taken apart once, to be tested against many texts. */
interface Parts {
  head: string;
  tail: string;
  pieces: Piece[];
  /** The shortest text that can match: every literal character once. */
  min: number;
}

function piece(text: string): Piece {
  const fail = new Int32Array(text.length);
  for (let i = 1, k = 0; i < text.length; i++) {
    while (k > 0 && text.charCodeAt(i) !== text.charCodeAt(k)) k = fail[k - 1]!;
    if (text.charCodeAt(i) === text.charCodeAt(k)) k++;
    fail[i] = k;
  }
  return { text, fail };
}

function partsOf(pattern: string): Parts | string {
  const split = pattern.split('*');
  if (split.length === 1) return pattern; // no star: the text must be the pattern
  const head = split[0]!;
  const tail = split.at(-1)!;
  const pieces = split
    .slice(1, -1)
    .filter((p) => p !== '')
    .map(piece);
  const min = head.length + tail.length + pieces.reduce((n, p) => n + p.text.length, 0);
  return { head, tail, pieces, min };
}

/** Counts the characters looked at (tests read it to hold the bound); null: not counted. */
type Meter = { steps: number } | null;

/** Where `p` first occurs in `text[from, end)`, or -1. */
function find(text: string, p: Piece, from: number, end: number, meter: Meter): number {
  const n = p.text.length;
  let k = 0;
  for (let i = from; i < end; i++) {
    const c = text.charCodeAt(i);
    while (k > 0 && c !== p.text.charCodeAt(k)) {
      k = p.fail[k - 1]!;
      if (meter) meter.steps++;
    }
    if (meter) meter.steps++;
    if (c === p.text.charCodeAt(k)) k++;
    if (k === n) return i - n + 1;
  }
  return -1;
}

function test(parts: Parts | string, text: string, meter: Meter): boolean {
  if (typeof parts === 'string') return text === parts;
  const { head, tail, pieces, min } = parts;
  // Long enough for every literal once, so the head and the tail cannot overlap.
  if (text.length < min || !text.startsWith(head) || !text.endsWith(tail)) return false;
  if (meter) meter.steps += head.length + tail.length;
  let at = head.length;
  const end = text.length - tail.length;
  for (const p of pieces) {
    const found = find(text, p, at, end, meter);
    if (found < 0) return false;
    at = found + p.text.length;
  }
  return true;
}

export function globMatch(pattern: string, text: string): boolean {
  return test(partsOf(pattern), text, null);
}

/** A matcher for one pattern, taken apart once; refuses patterns over the length cap. */
export function compileGlob(pattern: string): (text: string) => boolean {
  if (pattern.length > MAX_GLOB_LENGTH) throw new GlobTooLongError(pattern.length);
  const parts = partsOf(pattern);
  return (text) => test(parts, text, null);
}

/** The characters a match of `pattern` against `text` looks at (the bound's tests). */
export function globSteps(pattern: string, text: string): number {
  const meter = { steps: 0 };
  test(partsOf(pattern), text, meter);
  return meter.steps;
}
