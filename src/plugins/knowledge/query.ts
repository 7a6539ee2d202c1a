/**
 * Untrusted search text → search terms. Nothing the caller types reaches a query parser as
 * syntax: words are cut out with a Unicode letter/digit pattern (so `"`, `*`, `:`, `(`,
 * `NEAR`, `&`, `!` … are separators), lowercased, stop words dropped, deduplicated and
 * capped. Each backend then binds every term as a quoted phrase (FTS5) or a parameter of
 * plainto_tsquery (PostgreSQL).
 */

/** Most terms a query keeps (the rest are ignored): a prompt can be long. */
export const MAX_TERMS = 32;
/** Longest term kept; longer words are cut (no real word is this long). */
const MAX_TERM_CHARS = 64;

/**
 * PostgreSQL's english stop words (tsearch_data/english.stop): dropped on both backends, so
 * `the` matches nothing on either (FTS5 indexes them; PostgreSQL does not).
 */
const STOP_WORDS = new Set(
  `i me my myself we our ours ourselves you your yours yourself yourselves he him his himself
  she her hers herself it its itself they them their theirs themselves what which who whom
  this that these those am is are was were be been being have has had having do does did
  doing a an the and but if or because as until while of at by for with about against
  between into through during before after above below to from up down in out on off over
  under again further then once here there when where why how all any both each few more
  most other some such no nor not only own same so than too very s t can will just don
  should now`.split(/\s+/),
);

/** The terms of `text`, in order of first appearance. */
export function termsOf(text: string): string[] {
  const out: string[] = [];
  const seen = new Set<string>();
  for (const m of text.normalize('NFKC').matchAll(/[\p{L}\p{N}]+/gu)) {
    const term = m[0].toLowerCase().slice(0, MAX_TERM_CHARS);
    if (STOP_WORDS.has(term) || seen.has(term)) continue;
    seen.add(term);
    out.push(term);
    if (out.length === MAX_TERMS) break;
  }
  return out;
}

/** An FTS5 MATCH expression: each term a quoted phrase (quotes doubled), joined by AND or OR. */
export function fts5Match(terms: readonly string[], match: 'all' | 'any'): string {
  return terms.map((t) => `"${t.replaceAll('"', '""')}"`).join(match === 'all' ? ' AND ' : ' OR ');
}
