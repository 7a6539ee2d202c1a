import type { SliceGate } from '../../util/slice-gate.ts';
import { eachYielding } from '../../util/yielding.ts';
import { type CompiledRoute, compileMatch, MATCH_KEYS, type MatchKey, type Message } from './match.ts';

/**
 * First-match over many routes without walking them all, each route's expression compiled
 * once (linear-time globs, util/glob.ts). Each route is filed under one literal pair of its
 * match (a glob without `*`, tried in INDEX_ORDER: platform is the last resort, it is shared
 * by many), else under the longest literal head of one of its globs (`room=-100*` under
 * room `-100`), else it is in `rest`. A message can only match routes filed under one of its
 * own values or a head its value starts with, or routes in `rest`. Those few candidate lists
 * are merged by evaluation order and checked in it, so the first that holds is the first
 * route by seq that matches — the same answer as a walk over every route (`firstMatch`).
 */
const INDEX_ORDER: readonly MatchKey[] = ['chat_jid', 'room', 'sender', 'verb', 'platform'];

interface Entry<R> {
  pos: number;
  route: R;
  test: (msg: Message) => boolean;
}

type Lists<R> = Map<string, Entry<R>[]>;

const file = <R>(m: Lists<R>, key: string, e: Entry<R>) => {
  const list = m.get(key);
  if (list) list.push(e);
  else m.set(key, [e]);
};

export class RouteIndex<R extends CompiledRoute> {
  private readonly byKey = new Map<MatchKey, Lists<R>>();
  /** Per key, per head length, per head. */
  private readonly byHead = new Map<MatchKey, Map<number, Lists<R>>>();
  private readonly rest: Entry<R>[] = [];
  readonly size: number;

  /** `routes` in evaluation order (seq, then id). */
  constructor(routes: readonly R[], filed = true) {
    this.size = routes.length;
    for (const k of MATCH_KEYS) this.byKey.set(k, new Map());
    if (filed) for (const [pos, route] of routes.entries()) this.file(route, pos);
  }

  /** The same index, built letting the event loop turn every `sliceMs` (thousands of routes take tens of ms). */
  static async build<R extends CompiledRoute>(routes: readonly R[], sliceMs: number): Promise<RouteIndex<R>> {
    const index = new RouteIndex(routes, false);
    await eachYielding(routes, sliceMs, (route, pos) => index.file(route, pos));
    return index;
  }

  private file(route: R, pos: number): void {
    const e = { pos, route, test: compileMatch(route.match) };
    const key = INDEX_ORDER.find((k) => route.match.some(([mk, g]) => mk === k && !g.includes('*')));
    if (key !== undefined) {
      file(this.byKey.get(key)!, route.match.find(([mk]) => mk === key)![1], e);
      return;
    }
    let best: [MatchKey, string] | undefined;
    for (const [k, g] of route.match) {
      const head = g.slice(0, g.indexOf('*'));
      if (head.length > (best?.[1].length ?? 0)) best = [k, head];
    }
    if (!best) {
      this.rest.push(e);
      return;
    }
    const [k, head] = best;
    const byLength = this.byHead.get(k) ?? new Map<number, Lists<R>>();
    this.byHead.set(k, byLength);
    const lists = byLength.get(head.length) ?? new Map<string, Entry<R>[]>();
    byLength.set(head.length, lists);
    file(lists, head, e);
  }

  first(msg: Message): R | null {
    const next = this.candidates(msg);
    for (let e = next(); e; e = next()) if (e.test(msg)) return e.route;
    return null;
  }

  /**
   * `first`, in pieces of 32 candidate routes, each taking a turn through `gate` (shared by
   * every message of the server): a zone of many routes costs a message more time, and many
   * messages at once wait for each other, never a longer stall.
   */
  async firstYielding(msg: Message, gate: SliceGate): Promise<R | null> {
    const next = this.candidates(msg);
    let n = 0;
    for (let e = next(); e; e = next()) {
      if (n++ % 32 === 0) await gate.turn();
      if (e.test(msg)) return e.route;
    }
    return null;
  }

  /** The routes a message can match, in evaluation order: each call the next, then undefined. */
  private candidates(msg: Message): () => Entry<R> | undefined {
    const lists: Entry<R>[][] = [];
    for (const k of INDEX_ORDER) {
      const list = this.byKey.get(k)!.get(msg[k] ?? '');
      if (list) lists.push(list);
    }
    for (const [k, byLength] of this.byHead) {
      const v = msg[k] ?? '';
      for (const [n, heads] of byLength) {
        const list = n <= v.length ? heads.get(v.slice(0, n)) : undefined;
        if (list) lists.push(list);
      }
    }
    if (this.rest.length > 0) lists.push(this.rest);
    // Merge the (each ordered) candidate lists by position.
    if (lists.length === 1) {
      const only = lists[0]!;
      let i = 0;
      return () => only[i++];
    }
    const at = lists.map(() => 0);
    return () => {
      let best = -1;
      for (let i = 0; i < lists.length; i++) {
        const e = lists[i]![at[i]!];
        if (e && (best < 0 || e.pos < lists[best]![at[best]!]!.pos)) best = i;
      }
      return best < 0 ? undefined : lists[best]![at[best]!++];
    };
  }
}
