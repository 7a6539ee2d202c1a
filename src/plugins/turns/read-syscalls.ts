import { z } from 'zod';
import { defineSyscall } from '../../contract/syscall.ts';
import type { LogEvent } from '../../store/events.ts';
import { listArtifacts, readArtifact } from './artifacts.ts';
import {
  namespace,
  nsOf,
  questionOut,
  reportOut,
  sessionId,
  sessionOut,
  turnOut,
  turnsOf,
} from './common.ts';
import { bridgeSession } from './ops.ts';
import { requireSafeId } from './policy.ts';
import { questionRecord, reportRecord, sessionRecord, turnRecord } from './records.ts';
import { capturePane } from './tmux.ts';
import { eventSummary, summaryOut } from './watch.ts';

/** Reads: sessions, tails, artifacts, the coordination snapshot. */

export const bridgeListSessions = defineSyscall({
  name: 'bridge_list_sessions',
  group: 'turns',
  summary: "The coordinator sessions of a namespace (never every namespace's)",
  input: z.object({
    limit: z.coerce.number().int().min(1).max(500).optional().describe('Max items'),
    ...namespace,
  }),
  output: z.object({ sessions: z.array(sessionOut) }),
  callers: ['operator'],
  http: { method: 'GET', path: '/v1/bridge/sessions' },
  cli: {
    command: ['coordinator', 'sessions'],
    examples: ['warren coordinator sessions --profile team-a --repo app'],
  },
  handler: async (ctx, i) => {
    const ns = nsOf(ctx, i);
    const rows = await turnsOf(ctx)
      .tables.reader.selectFrom('turns_sessions')
      .selectAll()
      .where('zone', '=', ctx.principal.zone)
      .where('profile', '=', ns.profile)
      .where('repo', '=', ns.repo)
      .orderBy('session_id')
      .limit(i.limit ?? 100)
      .execute();
    return { sessions: rows.map(sessionRecord) };
  },
});

export const bridgeReadTail = defineSyscall({
  name: 'bridge_read_tail',
  group: 'turns',
  summary: "A session's recent output, bounded and advisory (never a turn's outcome)",
  input: z.object({
    session_id: sessionId,
    lines: z.coerce.number().int().min(1).max(500).optional().describe('How many lines, from the end'),
    ...namespace,
  }),
  output: z.object({
    text: z.string(),
    source: z.string(),
    advisory: z.literal(true),
    truncated: z.boolean(),
  }),
  callers: ['operator'],
  http: { method: 'GET', path: '/v1/bridge/sessions/:session_id/tail' },
  cli: {
    command: ['coordinator', 'tail'],
    positional: ['session_id'],
    examples: ['warren coordinator tail ses_01j… --lines 50'],
  },
  handler: async (ctx, i) => {
    const s = await bridgeSession(turnsOf(ctx).tables.reader, ctx.principal.zone, nsOf(ctx, i), i.session_id);
    const lines = i.lines ?? 50;
    const cap = turnsOf(ctx).policy.artifactByteCap;
    let text: string;
    let source: string;
    if (s.tmux_target) {
      // The screen's unused rows are blank lines at the bottom: not output.
      text = (await capturePane(s.tmux_target, lines).catch(() => '')).replace(/\s+$/, '');
      source = 'tmux';
    } else {
      // The session's recent messages from the log (by its index on session and seq), newest last.
      const rows = await ctx.kernel.events(ctx.principal, {
        type: 'session.output',
        session: s.session_id,
        limit: lines,
      });
      text = rows
        .slice()
        .reverse()
        .map((e) => String((e.payload as { text?: unknown }).text ?? ''))
        .join('\n');
      source = 'log';
    }
    const all = text.split('\n');
    let out = all.slice(-lines).join('\n');
    const truncated = Buffer.byteLength(out) > cap;
    if (truncated) out = Buffer.from(out).subarray(-cap).toString('utf8');
    return { text: out, source, advisory: true as const, truncated };
  },
});

export const bridgeListArtifacts = defineSyscall({
  name: 'bridge_list_artifacts',
  group: 'turns',
  summary: "One directory level under a session's working directory (links that lead out are not followed)",
  input: z.object({
    session_id: sessionId,
    path: z.string().max(1024).optional().describe('Relative to the working directory (default: its top)'),
    limit: z.coerce.number().int().min(1).max(1000).optional().describe('Max items'),
    ...namespace,
  }),
  output: z.object({
    entries: z.array(z.object({ path: z.string(), type: z.string(), bytes: z.number() })),
    truncated: z.boolean(),
  }),
  callers: ['operator'],
  http: { method: 'GET', path: '/v1/bridge/sessions/:session_id/artifacts' },
  cli: {
    command: ['coordinator', 'artifacts'],
    positional: ['session_id'],
    examples: ['warren coordinator artifacts ses_01j… --path out'],
  },
  handler: async (ctx, i) => {
    const s = await bridgeSession(turnsOf(ctx).tables.reader, ctx.principal.zone, nsOf(ctx, i), i.session_id);
    return listArtifacts(s.cwd, i.path ?? '', i.limit ?? 200);
  },
});

export const bridgeReadArtifact = defineSyscall({
  name: 'bridge_read_artifact',
  group: 'turns',
  summary: "A file under a session's working directory: canonicalised, byte-capped, binary detected",
  description:
    'The path is relative to the session’s working directory; absolute paths, `..` and symlinks that resolve outside it are refused. At most the bridge’s artifact byte cap is returned (truncated: true); a binary file returns no content (binary: true).',
  input: z.object({
    session_id: sessionId,
    path: z.string().min(1).max(1024).describe('The file, relative to the working directory'),
    max_bytes: z.coerce.number().int().min(1).optional().describe('At most the bridge’s cap'),
    ...namespace,
  }),
  output: z.object({
    path: z.string(),
    bytes: z.number(),
    content: z.string().nullable(),
    encoding: z.string().nullable(),
    binary: z.boolean(),
    truncated: z.boolean(),
  }),
  callers: ['operator'],
  http: { method: 'GET', path: '/v1/bridge/sessions/:session_id/artifact' },
  cli: {
    command: ['coordinator', 'artifact'],
    positional: ['session_id', 'path'],
    examples: ['warren coordinator artifact ses_01j… out/report.md'],
  },
  handler: async (ctx, i) => {
    const s = await bridgeSession(turnsOf(ctx).tables.reader, ctx.principal.zone, nsOf(ctx, i), i.session_id);
    const cap = turnsOf(ctx).policy.artifactByteCap;
    return readArtifact(s.cwd, i.path, Math.min(i.max_bytes ?? cap, cap));
  },
});

export const bridgeCoordinationStatus = defineSyscall({
  name: 'bridge_coordination_status',
  group: 'turns',
  summary:
    'A snapshot for polling: sessions, their states, turns, open questions, reports, recent events, latest_event_seq',
  input: z.object({
    limit: z.coerce.number().int().min(1).max(100).optional().describe('Max items'),
    ...namespace,
  }),
  output: z.object({
    sessions: z.array(sessionOut),
    session_states: z.record(z.string(), z.string()),
    turns: z.array(turnOut),
    questions: z.array(questionOut),
    reports: z.array(reportOut),
    events: z.array(summaryOut),
    latest_event_seq: z.number(),
  }),
  callers: ['operator'],
  http: { method: 'GET', path: '/v1/bridge/status' },
  cli: { command: ['coordinator', 'snapshot'], examples: ['warren coordinator snapshot'] },
  handler: async (ctx, i) => {
    const ns = nsOf(ctx, i);
    const limit = i.limit ?? 20;
    const db = turnsOf(ctx).tables.reader;
    // Read the head first: whatever the snapshot shows is at or after it; resume from it.
    const latest = await ctx.kernel.logHead();
    const sessions = await db
      .selectFrom('turns_sessions')
      .selectAll()
      .where('zone', '=', ctx.principal.zone)
      .where('profile', '=', ns.profile)
      .where('repo', '=', ns.repo)
      .orderBy('session_id')
      .limit(100)
      .execute();
    const ids = sessions.map((s) => s.session_id);
    const states: Record<string, string> = {};
    const turns = ids.length
      ? await db
          .selectFrom('turns')
          .selectAll()
          .where('session_id', 'in', ids)
          .orderBy('id', 'desc')
          .limit(limit)
          .execute()
      : [];
    const questions = ids.length
      ? await db
          .selectFrom('turns_questions')
          .selectAll()
          .where('session_id', 'in', ids)
          .where('status', '=', 'open')
          .orderBy('id')
          .limit(limit)
          .execute()
      : [];
    const reports = ids.length
      ? await db
          .selectFrom('turns_reports')
          .selectAll()
          .where('session_id', 'in', ids)
          .orderBy('id', 'desc')
          .limit(limit)
          .execute()
      : [];
    for (const id of ids) {
      try {
        states[id] = (await ctx.kernel.session(ctx.principal, requireSafeId('session_id', id))).status;
      } catch {
        states[id] = 'gone';
      }
    }
    const mine = new Set(ids);
    const recent: LogEvent[] = ids.length
      ? (await ctx.kernel.events(ctx.principal, { before: latest + 1, limit: 500 })).filter(
          (e) => e.session_id !== null && mine.has(e.session_id),
        )
      : [];
    return {
      sessions: sessions.map(sessionRecord),
      session_states: states,
      turns: turns.map(turnRecord),
      questions: questions.map(questionRecord),
      reports: reports.map(reportRecord),
      events: recent.slice(0, limit).reverse().map(eventSummary),
      latest_event_seq: latest,
    };
  },
});

export const readSyscalls = [
  bridgeListSessions,
  bridgeReadTail,
  bridgeListArtifacts,
  bridgeReadArtifact,
  bridgeCoordinationStatus,
];
