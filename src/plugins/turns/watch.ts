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

/** Characters of the one-line `summary`. */
const SUMMARY_CHARS = 160;

/** Seed 004's journal record (`schema_version` 1), plus warren's `actor` and `payload_truncated`. */
export const summaryOut = z.object({
  schema_version: z.literal(1),
  seq: z.number(),
  id: z.string(),
  timestamp: z.string(),
  kind: z.string(),
  session_id: z.string().nullable(),
  turn_id: z.string().nullable(),
  question_id: z.string().nullable(),
  report_id: z.string().nullable(),
  summary: z.string(),
  payload_ref: z.string(),
  metadata: z.record(z.string(), z.union([z.string(), z.number(), z.boolean(), z.null()])),
  actor: z.string(),
  payload_truncated: z.boolean(),
});

const idIn = (payload: Record<string, unknown>, key: string): string | null =>
  typeof payload[key] === 'string' ? (payload[key] as string) : null;

/**
 * A bounded record of an event: its ids, a one-line summary, and bounded scalar metadata
 * (long text replaced by its size, objects left out); `payload_ref` names where the whole
 * thing is (a turn, question, report, or the event by seq).
 */
export function eventSummary(e: LogEvent): z.infer<typeof summaryOut> {
  const payload = (e.payload ?? {}) as Record<string, unknown>;
  const metadata: Record<string, string | number | boolean | null> = {};
  let truncated = false;
  let used = 0;
  for (const [k, v] of Object.entries(payload)) {
    if (typeof v === 'string' && Buffer.byteLength(v) > 120) {
      metadata[`${k}_bytes`] = Buffer.byteLength(v);
      truncated = true;
      continue;
    }
    const scalar = v === null || ['string', 'number', 'boolean'].includes(typeof v);
    const json = JSON.stringify(v) ?? '';
    if (!scalar || used + json.length > SUMMARY_PAYLOAD_BYTES) {
      truncated = true;
      continue;
    }
    used += json.length;
    metadata[k] = v as string | number | boolean | null;
  }
  const said = ['summary', 'text', 'status', 'reason']
    .map((k) => payload[k])
    .find((v) => typeof v === 'string');
  const line = [e.type, idIn(payload, 'turn_id') ?? e.session_id, said].filter(Boolean).join(' ');
  return {
    schema_version: 1,
    seq: e.seq,
    id: e.id,
    timestamp: new Date(e.ts).toISOString(),
    kind: e.type,
    session_id: e.session_id,
    turn_id: idIn(payload, 'turn_id'),
    question_id: idIn(payload, 'question_id'),
    report_id: idIn(payload, 'report_id'),
    summary: line.length > SUMMARY_CHARS ? `${line.slice(0, SUMMARY_CHARS - 1)}…` : line,
    payload_ref: typeof payload.ref === 'string' ? payload.ref : `event:${e.seq}`,
    metadata,
    actor: e.actor,
    payload_truncated: truncated,
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
