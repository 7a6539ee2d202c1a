/**
 * Credential redaction for what goes into the log. An agent that passes a key inline in a
 * spawn's `env` (instead of by secret name) would otherwise have it recorded verbatim in its
 * tool-call event; the key names that look like credentials are enough to recognise it.
 */

export const REDACTED = '[redacted]';

/**
 * `*API_KEY*`, `*ACCESS_KEY*`, `*TOKEN*` (not `inputTokens`), `*SECRET*`, `*PASSWORD*`,
 * `*PASSWD*`, `*CREDENTIAL*`, `*PRIVATE_KEY*`, `*AUTHORIZATION*`, `*COOKIE*`, in any case;
 * and environment-style `*_KEY` / `KEY` in capitals (not `idempotency_key`).
 */
const CREDENTIAL =
  /(API_?KEY|ACCESS_?KEY|TOKEN(?!S)|SECRET|PASSWORD|PASSWD|CREDENTIAL|PRIVATE_?KEY|AUTHORIZATION|COOKIE)/i;
const ENV_KEY = /(^|_)KEY$/;

export const looksLikeCredential = (key: string): boolean => CREDENTIAL.test(key) || ENV_KEY.test(key);

/** Objects nested deeper than this are cut: the log is not the place for them, and the walk stays bounded. */
const MAX_DEPTH = 32;

/**
 * A copy of `value` with every string under a credential-looking key replaced by
 * `[redacted]`, at any depth, including inside strings that hold JSON objects (tool inputs
 * often arrive as JSON text). `secretEnv` maps variables to secret *names*, which are not
 * secret, so it is kept as it is.
 */
export function redactCredentials<T>(value: T): T {
  return walk(value, 0) as T;
}

function walk(value: unknown, depth: number): unknown {
  if (depth > MAX_DEPTH) return REDACTED;
  if (typeof value === 'string') return redactJsonText(value, depth);
  if (Array.isArray(value)) return value.map((v) => walk(v, depth + 1));
  if (value === null || typeof value !== 'object') return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (k === 'secretEnv') out[k] = v;
    else if (looksLikeCredential(k) && typeof v === 'string') out[k] = REDACTED;
    else out[k] = walk(v, depth + 1);
  }
  return out;
}

/** A string holding a JSON object or array is redacted inside; any other string is kept. */
function redactJsonText(text: string, depth: number): string {
  const t = text.trimStart();
  if (!(t.startsWith('{') || t.startsWith('[')) || text.length > 1_000_000) return text;
  let parsed: unknown;
  try {
    parsed = JSON.parse(text);
  } catch {
    return text;
  }
  const redacted = walk(parsed, depth + 1);
  return JSON.stringify(redacted) === JSON.stringify(parsed) ? text : JSON.stringify(redacted);
}

/** Values shorter than this are not scrubbed: they would match ordinary text. */
const MIN_SCRUBBED = 6;

/**
 * A copy of `value` with every occurrence of a known secret value, in any string at any
 * depth, replaced by `[secret:<name>]`. For what an agent that holds secrets reports.
 */
export function scrubValues<T>(value: T, secrets: ReadonlyMap<string, string>): T {
  const pairs = [...secrets].filter(([, v]) => v.length >= MIN_SCRUBBED);
  if (pairs.length === 0) return value;
  const scrub = (v: unknown, depth: number): unknown => {
    if (typeof v === 'string') {
      let s = v;
      for (const [name, secret] of pairs)
        if (s.includes(secret)) s = s.split(secret).join(`[secret:${name}]`);
      return s;
    }
    if (depth > MAX_DEPTH || v === null || typeof v !== 'object') return v;
    if (Array.isArray(v)) return v.map((x) => scrub(x, depth + 1));
    return Object.fromEntries(Object.entries(v).map(([k, x]) => [k, scrub(x, depth + 1)]));
  };
  return scrub(value, 0) as T;
}
