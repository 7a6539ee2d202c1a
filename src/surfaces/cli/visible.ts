/**
 * Text from agents and names reaches the operator's terminal: control characters in it (ESC
 * above all: `\x1b[2J` clears the screen, `\x1b]0;…\x07` retitles the window) are printed as
 * visible escapes, never raw. Covers C0, DEL and C1.
 */

const isControl = (code: number): boolean => code < 0x20 || (code >= 0x7f && code <= 0x9f);

const hexEscape = (code: number): string => `\\x${code.toString(16).padStart(2, '0')}`;

/** Every control character as `\xNN`; `keepNewlines` leaves line breaks (a whole rendered view). */
export function visible(text: string, opts: { keepNewlines?: boolean } = {}): string {
  let out = '';
  let from = 0;
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (!isControl(code) || (code === 0x0a && opts.keepNewlines)) continue;
    out += text.slice(from, i) + hexEscape(code);
    from = i + 1;
  }
  return from === 0 ? text : out + text.slice(from);
}

/** JSON text with DEL and C1 as `\u00NN` too (JSON.stringify escapes only C0): the same value, safe to print. */
export function visibleJson(json: string): string {
  let out = '';
  let from = 0;
  for (let i = 0; i < json.length; i++) {
    const code = json.charCodeAt(i);
    if (code < 0x7f || code > 0x9f) continue;
    out += `${json.slice(from, i)}\\u00${code.toString(16)}`;
    from = i + 1;
  }
  return from === 0 ? json : out + json.slice(from);
}
