/**
 * The groups plugin (seed 002):
 * - routeMatch: first-match throughput over 10 000 routes (`platform=telegram room=<id>`;
 *   all literal, then every tenth a glob `room=<prefix>*`), indexed (what inbound uses) and
 *   by a plain walk, messages spread over all of them (a match half-way down on average),
 *   as inbound routing does it (the compiled routes of a zone, `firstMatch`). Baseline, same
 *   routes and messages: a plain loop comparing `room` strings — what matching costs over
 *   the walk itself.
 * - inboundDelivery: `groups_inbound` → the target group's agent (10 groups, idle script
 *   agents), per message: routing, the decision logged, the text committed on the agent's
 *   stdin. The first message to a group starts its agent (reported apart); the rest go to the
 *   live one. Baseline: `send` of the same text straight to the same session.
 */

import { byOrder, firstMatch, parseMatch } from '../src/plugins/groups/match.ts';
import { RouteIndex } from '../src/plugins/groups/route-index.ts';
import { Warren } from '../src/syscalls/warren.ts';
import { operator } from '../src/vocab/principal.ts';
import { round, summary } from './lib/stats.ts';
import { tempDir } from './lib/tempdir.ts';
import type { BenchRow } from './store.ts';

const ROUTES = 10_000;
const MESSAGES = Number(process.env.GROUPS_BENCH_MESSAGES ?? 2_000);
const op = operator('bench');

function routeMatch(globEvery: number): BenchRow[] {
  const kind = globEvery > 0 ? `1 in ${globEvery} a glob` : 'all literal';
  const routes = Array.from({ length: ROUTES }, (_, i) => ({
    id: `r${String(i).padStart(6, '0')}`,
    seq: i,
    target: `g${i % 100}`,
    match: parseMatch(
      globEvery > 0 && i % globEvery === globEvery - 1
        ? `platform=telegram room=-${i}*`
        : `platform=telegram room=-${i}`,
    ),
  })).sort(byOrder);
  const rooms = routes.map((r) => r.match.find(([k]) => k === 'room')![1].replace('*', 'x'));
  const msgs = Array.from({ length: MESSAGES }, (_, i) => ({
    platform: 'telegram',
    room: rooms[(i * 7919) % ROUTES]!,
    verb: 'message',
  }));
  const plain = routes.map((r) => r.match.find(([k]) => k === 'room')![1]);

  const index = new RouteIndex(routes);
  let hits = 0;
  let t = performance.now();
  for (const m of msgs) if (index.first(m)) hits++;
  const indexMs = performance.now() - t;
  if (hits !== MESSAGES) throw new Error(`routeMatch: ${hits} of ${MESSAGES} matched`);

  hits = 0;
  t = performance.now();
  for (const m of msgs) if (firstMatch(routes, m)) hits++;
  const matchMs = performance.now() - t;
  if (hits !== MESSAGES) throw new Error(`routeMatch (walk): ${hits} of ${MESSAGES} matched`);

  let found = 0;
  t = performance.now();
  for (const m of msgs) {
    for (let i = 0; i < plain.length; i++) {
      const p = plain[i]!;
      if (p === m.room || (p.endsWith('*') && m.room.startsWith(p.slice(0, -1)))) {
        found++;
        break;
      }
    }
  }
  const loopMs = performance.now() - t;
  if (found !== MESSAGES) throw new Error('routeMatch baseline: not every message matched');
  const indexed = MESSAGES / (indexMs / 1000);
  const walk = MESSAGES / (matchMs / 1000);
  const base = MESSAGES / (loopMs / 1000);
  return [
    {
      name: `groups: route match, ${ROUTES} routes (${kind}), indexed`,
      value: round(indexed, 0),
      unit: 'msg/s',
      baseline: round(base, 0),
      ratio: round(indexed / base, 2),
      note: 'what inbound uses; baseline: a plain string-compare loop over the same routes',
    },
    {
      name: `groups: route match, ${ROUTES} routes (${kind}), walk`,
      value: round(walk, 0),
      unit: 'msg/s',
      baseline: round(base, 0),
      ratio: round(walk / base, 2),
      note: 'every route in order, each pair checked (firstMatch)',
    },
  ];
}

async function inboundDelivery(): Promise<BenchRow[]> {
  using tmp = tempDir('wgb-');
  const w = await Warren.open({
    dataDir: tmp.dir,
    kernel: { reconcileIntervalMs: 60_000, resumeOnStart: false },
    metrics: false,
  });
  try {
    const call = (name: string, input: Record<string, unknown>) =>
      w.call(op, name, input) as Promise<{
        routed: boolean;
        reason?: string;
        how?: string;
        sessionId: string;
      }>;
    await call('register_group', { folder: 'main', agent: { script: { steps: [{ listen: {} }] } } });
    const G = 10;
    for (let g = 0; g < G; g++) {
      await call('register_group', { folder: `main/g${g}` });
      await call('add_route', { seq: g, match: `platform=telegram room=-${g}`, target: `main/g${g}` });
    }
    const msg = (i: number) => ({
      platform: 'telegram',
      room: `-${i % G}`,
      chat_jid: `tg:-${i % G}`,
      sender: 'bench',
      verb: 'message',
      text: `message ${i}`,
    });
    const cold: number[] = [];
    const warm: number[] = [];
    const sessions = new Map<number, string>();
    const N = Number(process.env.GROUPS_BENCH_N ?? 500);
    for (let i = 0; i < N; i++) {
      const t = performance.now();
      const r = await call('groups_inbound', msg(i));
      const ms = performance.now() - t;
      if (!r.routed) throw new Error(`inbound ${i} was not routed: ${r.reason}`);
      (r.how === 'started' ? cold : warm).push(ms);
      sessions.set(i % G, r.sessionId);
    }
    const direct: number[] = [];
    for (let i = 0; i < N; i++) {
      const t = performance.now();
      await call('send', { id: sessions.get(i % G)!, text: `message ${i}` });
      direct.push(performance.now() - t);
    }
    const w1 = summary(warm);
    const d = summary(direct);
    const c = summary(cold);
    return [
      {
        name: 'groups: inbound → live agent, p50',
        value: round(w1.p50),
        unit: 'ms',
        baseline: round(d.p50),
        ratio: round(w1.p50 / d.p50, 2),
        note: `${w1.n} messages; baseline: send to the session`,
      },
      {
        name: 'groups: inbound → live agent, p99',
        value: round(w1.p99),
        unit: 'ms',
        baseline: round(d.p99),
        ratio: round(w1.p99 / d.p99, 2),
      },
      {
        name: 'groups: inbound → agent started, p50',
        value: round(c.p50),
        unit: 'ms',
        note: `${c.n} cold starts (socket opened, session spawned, message sent); p99 ${round(c.p99)} ms`,
      },
    ];
  } finally {
    await w.close();
  }
}

export const groupBenches = {
  groupsRouteMatch: async () => [...routeMatch(0), ...routeMatch(10)],
  groupsInbound: inboundDelivery,
};
