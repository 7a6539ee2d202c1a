import type { FastifyInstance } from 'fastify';
import { WarrenError } from '../../vocab/errors.ts';

/** Deeper than any real input; deep enough nesting makes recursive code (validation, copies) overflow. */
export const MAX_JSON_DEPTH = 64;

/**
 * How deep a JSON text nests, by one linear scan that skips strings. Runs before
 * `JSON.parse`, so a 5,000-level body is refused without ever being built.
 */
export function jsonDepth(text: string, stopAt = Number.POSITIVE_INFINITY): number {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 92 /* \ */) i++;
      else if (c === 34 /* " */) inString = false;
    } else if (c === 34) inString = true;
    else if (c === 123 /* { */ || c === 91 /* [ */) {
      if (++depth > max) max = depth;
      if (max > stopAt) return max;
    } else if (c === 125 /* } */ || c === 93 /* ] */) depth--;
  }
  return max;
}

/**
 * JSON bodies: nesting bounded before parsing, then Fastify's own parser (which refuses
 * `__proto__` and `constructor.prototype` keys). Size is bounded by the server's bodyLimit.
 */
export function registerJsonParser(app: FastifyInstance, maxDepth = MAX_JSON_DEPTH): void {
  const parse = app.getDefaultJsonParser('error', 'error');
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    const text = body as string;
    if (jsonDepth(text, maxDepth) > maxDepth) {
      done(
        new WarrenError('invalid_input', `the JSON body nests deeper than ${maxDepth} levels`, { maxDepth }),
        undefined,
      );
      return;
    }
    parse(req, text, done);
  });
}
