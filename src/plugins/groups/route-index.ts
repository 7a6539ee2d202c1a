import { type CompiledRoute, MATCH_KEYS, type MatchKey, type Message, matches } from './match.ts';

/**
 * First-match over many routes without walking them all. Each route is filed under one
 * literal pair of its match (a glob without `*`, tried in MATCH_KEYS order: platform is
 * the last resort, it is shared by many): a message can only match routes filed under one
 * of its own values, or routes with no literal pair at all. Those few candidate lists are
 * merged by evaluation order and checked in it, so the first that holds is the first route
 * by seq that matches — the same answer as a walk over every route (`firstMatch`).
 */
const INDEX_ORDER: readonly MatchKey[] = ['chat_jid', 'room', 'sender', 'verb', 'platform'];

interface Entry<R> {
  pos: number;
  route: R;
}

export class RouteIndex<R extends CompiledRoute> {
  private readonly byKey = new Map<MatchKey, Map<string, Entry<R>[]>>();
  private readonly rest: Entry<R>[] = [];
  readonly size: number;

  /** `routes` in evaluation order (seq, then id). */
  constructor(routes: readonly R[]) {
    this.size = routes.length;
    for (const k of MATCH_KEYS) this.byKey.set(k, new Map());
    routes.forEach((route, pos) => {
      const e = { pos, route };
      const key = INDEX_ORDER.find((k) => route.match.some(([mk, g]) => mk === k && !g.includes('*')));
      if (key === undefined) {
        this.rest.push(e);
        return;
      }
      const value = route.match.find(([mk]) => mk === key)![1];
      const m = this.byKey.get(key)!;
      const list = m.get(value);
      if (list) list.push(e);
      else m.set(value, [e]);
    });
  }

  first(msg: Message): R | null {
    const lists: Entry<R>[][] = [];
    for (const k of INDEX_ORDER) {
      const list = this.byKey.get(k)!.get(msg[k] ?? '');
      if (list) lists.push(list);
    }
    if (this.rest.length > 0) lists.push(this.rest);
    // Merge the (each ordered) candidate lists by position, checking as we go.
    const at = lists.map(() => 0);
    for (;;) {
      let best = -1;
      for (let i = 0; i < lists.length; i++) {
        const e = lists[i]![at[i]!];
        if (e && (best < 0 || e.pos < lists[best]![at[best]!]!.pos)) best = i;
      }
      if (best < 0) return null;
      const e = lists[best]![at[best]!++]!;
      if (matches(e.route.match, msg)) return e.route;
    }
  }
}
