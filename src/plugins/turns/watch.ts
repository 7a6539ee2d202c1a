import { z } from 'zod';
import { defineSyscall } from '../../contract/syscall.ts';
import type { LogEvent } from '../../store/events.ts';
import { namespace, nsOf, sessionId, turnsOf } from './common.ts';
import { bridgeSession } from './ops.ts';

/** `watch_events`: a bounded long poll over warren's one log (no second journal). */

export const MAX_WATCH_MS = 30_000;
export const MAX_WATCH_EVENTS = 100;
/** Bytes of an event's payload a summary carries; beyond it, a pointer to the event. */
const SUMMARY_PAYLOAD_BYTES = 512;

export const summaryOut = z.object({
  seq: z.number(),
  ts: z.number(),
  type: z.string(),
  session_id: z.string().nullable(),
  actor: z.string(),
  summary: z.record(z.string(), z.unknown()),
  payload_truncated: z.boolean(),
  ref: z.string(),
});

/**
 * A bounded summary of an event: small fields kept, long text replaced by its size; the
 * `ref` names where the whole thing is (a turn, question, report, or the event by seq).
 */
export function eventSummary(e: LogEvent): z.infer<typeof summaryOut> {
  const summary: Record<string, unknown> = {};
  let truncated = false;
  let used = 0;
  for (const [k, v] of Object.entries(e.payload ?? {})) {
    const json = JSON.stringify(v) ?? '';
    if (typeof v === 'string' && Buffer.byteLength(v) > 120) {
      summary[`${k}_bytes`] = Buffer.byteLength(v);
      truncated = true;
      continue;
    }
    if (used + json.length > SUMMARY_PAYLOAD_BYTES) {
      truncated = true;
      continue;
    }
    used += json.length;
    summary[k] = v;
  }
  const ref = typeof e.payload?.ref === 'string' ? e.payload.ref : `event:${e.seq}`;
  return {
    seq: e.seq,
    ts: e.ts,
    type: e.type,
    session_id: e.session_id,
    actor: e.actor,
    summary,
    payload_truncated: truncated,
    ref,
  };
}

export const bridgeWatchEvents = defineSyscall({
  name: 'bridge_watch_events',
  group: 'turns',
  summary:
    'Long poll the log (bounded): events after a seq, at once if there are any, else on the next or the timeout',
  description:
    'Answers events (bounded summaries with a ref to their payload), latest_seq (resume with after_seq = latest_seq) and timed_out. timeout_ms is capped at 30000 and limit at 100. Push subscriptions are not offered over MCP: transport says long_poll.',
  input: z.object({
    after_seq: z.coerce.number().int().nonnegative().optional().describe('Events after this seq (default 0)'),
    session_id: sessionId.optional(),
    event_types: z
      .array(z.string().min(1).max(100))
      .max(50)
      .optional()
      .describe('Exact types, or a prefix ending in .*'),
    timeout_ms: z.coerce.number().int().nonnegative().optional().describe('At most 30000 (default 30000)'),
    limit: z.coerce.number().int().min(1).optional().describe('At most 100 (default 100)'),
    ...namespace,
  }),
  output: z.object({
    events: z.array(summaryOut),
    latest_seq: z.number(),
    timed_out: z.boolean(),
    transport: z.object({ mcp: z.literal('long_poll'), push_subscriptions: z.literal(false) }),
  }),
  callers: ['operator'],
  http: { method: 'GET', path: '/v1/bridge/events' },
  cli: {
    command: ['coordinator', 'watch'],
    examples: ['warren coordinator watch --after-seq 120 --timeout-ms 30000'],
  },
  handler: async (ctx, i) => {
    const { kernel, principal } = ctx;
    if (i.session_id !== undefined)
      await bridgeSession(turnsOf(ctx).tables.reader, principal.zone, nsOf(ctx, i), i.session_id);
    const after = i.after_seq ?? 0;
    const limit = Math.min(i.limit ?? MAX_WATCH_EVENTS, MAX_WATCH_EVENTS);
    const wait = Math.min(i.timeout_ms ?? MAX_WATCH_MS, MAX_WATCH_MS);
    const types = i.event_types ?? [];
    const wanted = (e: LogEvent) =>
      types.length === 0 ||
      types.some((t) => (t.endsWith('.*') ? e.type.startsWith(t.slice(0, -1)) : e.type === t));
    // What is already in the log answers at once, whatever the timeout (0 included).
    const page = await kernel.events(principal, { after, limit: 1000 });
    const ready = page.filter(
      (e) => (i.session_id === undefined || e.session_id === i.session_id) && wanted(e),
    );
    if (ready.length > 0) {
      const out = ready.slice(0, limit);
      return {
        events: out.map(eventSummary),
        latest_seq: out.at(-1)?.seq ?? after,
        timed_out: false,
        transport: { mcp: 'long_poll' as const, push_subscriptions: false as const },
      };
    }
    // Everything up to here is examined by the time the wait ends: a safe cursor when nothing matched.
    const head = await kernel.logHead();
    const ac = new AbortController();
    const onAbort = () => ac.abort();
    ctx.signal?.addEventListener('abort', onAbort);
    const timer = kernel.clock.setTimeout(() => ac.abort(), wait, { keepAlive: true });
    const out: LogEvent[] = [];
    try {
      const filter = i.session_id !== undefined ? { session: i.session_id } : {};
      for await (const e of kernel.follow(principal, filter, after, { signal: ac.signal })) {
        if (!wanted(e)) continue;
        out.push(e);
        if (out.length >= limit) break;
        // Matches exist: take what is already here (this tick), then answer.
        if (out.length === 1) setImmediate(() => ac.abort());
      }
    } finally {
      kernel.clock.clearTimeout(timer);
      ctx.signal?.removeEventListener('abort', onAbort);
      ac.abort();
    }
    const last = out.at(-1)?.seq;
    return {
      events: out.map(eventSummary),
      latest_seq: last ?? Math.max(after, head),
      timed_out: out.length === 0,
      transport: { mcp: 'long_poll' as const, push_subscriptions: false as const },
    };
  },
});
