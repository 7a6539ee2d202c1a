import { compileGlob, globMatch, MAX_GLOB_LENGTH } from '../../util/glob.ts';
import { invalid } from '../../vocab/errors.ts';

/**
 * A route's match expression: space-separated `key=glob` pairs, all of which must hold
 * (`platform=telegram verb=mention`). Keys: platform, room, chat_jid, sender, verb; each
 * at most once. A glob is the project's (`*` any run, every other character itself). An
 * empty expression matches every message.
 */
export const MATCH_KEYS = ['platform', 'room', 'chat_jid', 'sender', 'verb'] as const;
export type MatchKey = (typeof MATCH_KEYS)[number];
export type Message = Partial<Record<MatchKey, string>>;
export type Match = ReadonlyArray<readonly [MatchKey, string]>;
export const MAX_MATCH_LENGTH = 1024;
// biome-ignore lint/suspicious/noControlCharactersInRegex: this finds control characters
const CONTROL = /[\x00-\x1f\x7f]/;

export function parseMatch(text: string): Match {
  if (text.length > MAX_MATCH_LENGTH) {
    throw invalid(`a match expression is at most ${MAX_MATCH_LENGTH} characters`, { field: 'match' });
  }
  const out: Array<readonly [MatchKey, string]> = [];
  for (const pair of text.split(' ').filter((p) => p !== '')) {
    const eq = pair.indexOf('=');
    if (eq <= 0)
      throw invalid(`match: ${JSON.stringify(pair.slice(0, 80))} is not key=glob`, { field: 'match' });
    const key = pair.slice(0, eq);
    const glob = pair.slice(eq + 1);
    if (!(MATCH_KEYS as readonly string[]).includes(key)) {
      throw invalid(
        `match: unknown key ${JSON.stringify(key.slice(0, 40))} (keys: ${MATCH_KEYS.join(', ')})`,
        {
          field: 'match',
        },
      );
    }
    if (out.some(([k]) => k === key)) throw invalid(`match: ${key} given twice`, { field: 'match' });
    if (glob === '')
      throw invalid(`match: ${key} has an empty glob (use ${key}=* for any)`, { field: 'match' });
    if (glob.length > MAX_GLOB_LENGTH) {
      throw invalid(`match: the glob of ${key} is over ${MAX_GLOB_LENGTH} characters`, { field: 'match' });
    }
    if (CONTROL.test(glob)) {
      throw invalid(`match: the glob of ${key} has a control character`, { field: 'match' });
    }
    out.push([key as MatchKey, glob]);
  }
  return out;
}

/** The canonical text of a parsed expression (keys in grammar order). */
export const formatMatch = (m: Match): string =>
  [...m]
    .sort((a, b) => MATCH_KEYS.indexOf(a[0]) - MATCH_KEYS.indexOf(b[0]))
    .map(([k, g]) => `${k}=${g}`)
    .join(' ');

export const matches = (m: Match, msg: Message): boolean =>
  m.every(([k, glob]) => {
    const v = msg[k] ?? '';
    return glob.includes('*') ? globMatch(glob, v) : glob === v;
  });

/**
 * `matches` for one expression, its globs taken apart once (inbound tests every route of a
 * zone against every message). Linear in each field: see util/glob.ts.
 */
export function compileMatch(m: Match): (msg: Message) => boolean {
  const keys = m.map(([k]) => k);
  const tests = m.map(([, glob]) => compileGlob(glob));
  return (msg) => {
    for (let i = 0; i < tests.length; i++) if (!tests[i]!(msg[keys[i]!] ?? '')) return false;
    return true;
  };
}

export interface CompiledRoute {
  id: string;
  seq: number;
  target: string;
  match: Match;
}

/** The first route (by seq, then id) whose expression holds, or null. `routes` must be so sorted. */
export function firstMatch<R extends CompiledRoute>(routes: readonly R[], msg: Message): R | null {
  for (const r of routes) if (matches(r.match, msg)) return r;
  return null;
}

export const byOrder = (a: CompiledRoute, b: CompiledRoute) =>
  a.seq - b.seq || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0);
