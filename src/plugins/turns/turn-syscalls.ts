import { z } from 'zod';
import { defineSyscall, type SyscallContext } from '../../contract/syscall.ts';
import { invalid } from '../../vocab/errors.ts';
import { allowMutation, namespace, nsOf, sessionId, turnId, turnOut, turnsOf } from './common.ts';
import { bridgeSession, sendPrompt, turnOf } from './ops.ts';
import { requireMutation } from './policy.ts';
import { turnRecord } from './records.ts';
import { isTerminal } from './schema.ts';
import { paneAlive } from './tmux.ts';

/** Turns: the unit of work a coordinator hands a session. */

const MAX_AWAIT_MS = 30_000;
const MAX_PROMPT_BYTES = 256 * 1024;

export const bridgeSendPrompt = defineSyscall({
  name: 'bridge_send_prompt',
  group: 'turns',
  summary: 'Send a prompt to a coordinator session as a durable turn',
  description:
    'Creates a turn and delivers the prompt. One active turn per session: a second prompt is refused with active_turn_exists unless queue (it waits, promoted when the active one ends) or force (the active turn is superseded, recorded in the log). Mutation class: sessions.',
  input: z.object({
    session_id: sessionId,
    prompt: z
      .string()
      .min(1)
      .refine((t) => Buffer.byteLength(t) <= MAX_PROMPT_BYTES, `at most ${MAX_PROMPT_BYTES} bytes`)
      .describe('The prompt of the turn'),
    queue: z.boolean().optional().describe('Queue behind the active turn instead of refusing'),
    force: z.boolean().optional().describe('Supersede the active turn'),
    allow_mutation: allowMutation,
    ...namespace,
  }),
  // Seed 004's top-level fields (`queued`/`delivered` kept for its older callers), and the turn.
  output: z.object({
    ok: z.literal(true),
    session_id: z.string(),
    turn_id: z.string(),
    active_turn_id: z.string().nullable(),
    status: z.string(),
    queued: z.boolean(),
    delivered: z.boolean(),
    turn: turnOut,
    superseded_turn_id: z.string().nullable(),
  }),
  callers: ['operator'],
  http: { method: 'POST', path: '/v1/bridge/sessions/:session_id/turns' },
  handler: async (ctx, i) => {
    const t = turnsOf(ctx);
    requireMutation(t.policy, 'sessions', i.allow_mutation);
    if (i.queue && i.force) throw invalid('queue and force exclude each other');
    const r = await sendPrompt(ctx.kernel, t.tables, ctx.principal, nsOf(ctx, i), i);
    if (r.superseded) t.engine.forget(r.superseded);
    if (r.turn.status === 'active') t.engine.watch(r.turn.id, r.turn.zone, r.turn.session_id);
    return {
      ok: true as const,
      session_id: r.turn.session_id,
      turn_id: r.turn.id,
      active_turn_id: r.activeTurnId,
      status: r.turn.status,
      queued: r.turn.status === 'queued',
      delivered: r.turn.status === 'active',
      turn: turnRecord(r.turn),
      superseded_turn_id: r.superseded,
    };
  },
});

/**
 * Advisory, seed 004's `advisory_status`: whether the session's process is there and what it
 * seems to be doing (the turn's status is the authority). `state` is `running` (taking a
 * turn), `idle_or_unknown` (idle, or a tmux pane whose activity cannot be known),
 * `suspended`, or `gone`; `activity` is warren's detail where it has one.
 */
async function advisoryStatus(ctx: SyscallContext, sessionIdValue: string) {
  const s = await turnsOf(ctx)
    .tables.reader.selectFrom('turns_sessions')
    .selectAll()
    .where('session_id', '=', sessionIdValue)
    .executeTakeFirst();
  const gone = { live: false, state: 'gone', activity: null };
  if (s?.mode === 'tmux') {
    const alive = s.tmux_target ? await paneAlive(s.tmux_target) : false;
    return alive ? { live: true, state: 'idle_or_unknown', activity: null } : gone;
  }
  try {
    const info = await ctx.kernel.session(ctx.principal, sessionIdValue);
    if (info.status === 'stopped') return gone;
    const state = info.status === 'idle' ? 'idle_or_unknown' : info.status;
    return { live: true, state, activity: info.activity };
  } catch {
    return gone;
  }
}

const advisory = z.object({ live: z.boolean(), state: z.string(), activity: z.string().nullable() });

export const bridgeReadTurn = defineSyscall({
  name: 'bridge_read_turn',
  group: 'turns',
  summary: 'A turn: its authoritative record and the advisory live status of its session',
  input: z.object({ turn_id: turnId, session_id: sessionId.optional(), ...namespace }),
  output: z.object({ ok: z.literal(true), turn: turnOut, advisory_status: advisory }),
  callers: ['operator'],
  http: { method: 'GET', path: '/v1/bridge/turns/:turn_id' },
  cli: {
    command: ['coordinator', 'read-turn'],
    positional: ['turn_id'],
    examples: ['warren coordinator read-turn turn_01j…'],
  },
  handler: async (ctx, i) => {
    const t = await turnOf(
      turnsOf(ctx).tables.reader,
      ctx.principal.zone,
      nsOf(ctx, i),
      i.turn_id,
      i.session_id,
    );
    return {
      ok: true as const,
      turn: turnRecord(t),
      advisory_status: await advisoryStatus(ctx, t.session_id),
    };
  },
});

export const bridgeAwaitTurn = defineSyscall({
  name: 'bridge_await_turn',
  group: 'turns',
  summary: 'Wait (bounded, at most 30 s) for a turn to reach a terminal status',
  description:
    'Returns at once when the turn is completed, failed, cancelled or superseded; else when it becomes so, or after timeout_ms (default and cap 30000) with timed_out: true — call again.',
  input: z.object({
    turn_id: turnId,
    session_id: sessionId.optional(),
    timeout_ms: z.number().int().nonnegative().optional().describe('At most 30000'),
    ...namespace,
  }),
  output: z.object({ turn: turnOut, timed_out: z.boolean() }),
  callers: ['operator'],
  http: { method: 'POST', path: '/v1/bridge/turns/:turn_id/await' },
  cli: {
    command: ['coordinator', 'await-turn'],
    positional: ['turn_id'],
    examples: ['warren coordinator await-turn turn_01j… --timeout-ms 30000'],
  },
  handler: async (ctx, i) => {
    const ns = nsOf(ctx, i);
    const { tables, commits } = turnsOf(ctx);
    const wait = Math.min(i.timeout_ms ?? MAX_AWAIT_MS, MAX_AWAIT_MS);
    const deadline = ctx.kernel.clock.now() + wait;
    for (;;) {
      // Armed before reading, so an ending between the read and the wait is not missed.
      const left = deadline - ctx.kernel.clock.now();
      const armed = commits.arm(
        (e) => e.type.startsWith('turn.') && e.payload.turn_id === i.turn_id,
        Math.max(0, left),
        ctx.signal,
      );
      const t = await turnOf(tables.reader, ctx.principal.zone, ns, i.turn_id, i.session_id);
      // A stopping server (commits closed) answers with what the turn is now.
      if (isTerminal(t.status) || left <= 0 || ctx.signal?.aborted || commits.closed) {
        armed.cancel();
        return { turn: turnRecord(t), timed_out: !isTerminal(t.status) };
      }
      await armed.fired;
    }
  },
});

export const bridgeReadStatus = defineSyscall({
  name: 'bridge_read_status',
  group: 'turns',
  summary: "A coordinator session's status: its record, live state, active turn, queue and open questions",
  input: z.object({ session_id: sessionId, ...namespace }),
  output: z.object({
    session: z.record(z.string(), z.unknown()),
    advisory_status: advisory,
    active_turn: turnOut.nullable(),
    queued_turns: z.number(),
    open_questions: z.number(),
  }),
  callers: ['operator'],
  http: { method: 'GET', path: '/v1/bridge/sessions/:session_id' },
  cli: {
    command: ['coordinator', 'status'],
    positional: ['session_id'],
    examples: ['warren coordinator status ses_01j…'],
  },
  handler: async (ctx, i) => {
    const db = turnsOf(ctx).tables.reader;
    const s = await bridgeSession(db, ctx.principal.zone, nsOf(ctx, i), i.session_id);
    const turns = await db
      .selectFrom('turns')
      .selectAll()
      .where('session_id', '=', s.session_id)
      .where('status', 'in', ['active', 'queued'])
      .orderBy('id')
      .limit(1000)
      .execute();
    const open = await db
      .selectFrom('turns_questions')
      .select((eb) => eb.fn.countAll<number>().as('n'))
      .where('session_id', '=', s.session_id)
      .where('status', '=', 'open')
      .executeTakeFirst();
    const active = turns.find((t) => t.status === 'active');
    return {
      session: { ...s, created_at: Number(s.created_at) },
      advisory_status: await advisoryStatus(ctx, s.session_id),
      active_turn: active ? turnRecord(active) : null,
      queued_turns: turns.filter((t) => t.status === 'queued').length,
      open_questions: Number(open?.n ?? 0),
    };
  },
});

export { advisoryStatus };
