/**
 * What the team bench reports, from one run of the team scenario: per session (the lead and
 * each worker's CLI conversation) its model requests and input tokens, counted as the mock's
 * `count_tokens` does — JSON characters of the whole request body / 4, rounded up, per
 * request — and its turns spent on `[SIGTERM]`; the lead's wake-ups (inputs delivered to its
 * session) against the task outcomes it had to hear about; whether the operator's decision
 * reached the tasks that depend on the one that asked.
 */
import type { Ev } from '../helpers/warrens.ts';
import type { TeamRun } from './team-scenario.ts';
import { DECISION, type Role } from './team-script.ts';

export interface SessionFigures {
  /** `lead`, or the task's letter (`A#1`, `A#2` when the task had two sessions). */
  name: string;
  requests: number;
  inputTokens: number;
  /** The part of `inputTokens` that is warren's tool list (`mcp__warren__*` definitions). */
  warrenToolTokens: number;
  /** The part that is the CLI's own tools (Bash, Read, Edit, … : 24 of them by default). */
  otherToolTokens: number;
  /** Requests whose last input holds `[SIGTERM]`: a model turn spent on being stopped. */
  sigtermTurns: number;
}

export interface TeamFigures {
  sessions: SessionFigures[];
  totals: Omit<SessionFigures, 'name'>;
  lead: {
    /** Inputs delivered to the lead's session (`session.input` events): its wake-ups. */
    wakeUps: number;
    /** Its tasks' outcomes (complete, failed, cancelled) plus their escalations (waiting on the operator). */
    outcomes: number;
  };
  /** Of the tasks after B (C, D), those whose session's first request carried the operator's decision. */
  decisionReached: string[];
  /** What the operator's `warren inbox answer` said (exit code and first line). */
  answer: string;
}

export const tokensOf = (chars: number) => Math.ceil(chars / 4);

export function measure(run: TeamRun): TeamFigures {
  // One row per CLI conversation, named by role, numbered when a role had several.
  const order: string[] = [];
  const roleOf = new Map<string, Role | null>();
  for (const r of run.requests.filter((r) => !r.side)) {
    if (!roleOf.has(r.conversation)) order.push(r.conversation);
    roleOf.set(r.conversation, r.role);
  }
  const count = (role: Role | null) => order.filter((c) => roleOf.get(c) === role).length;
  const sessions: SessionFigures[] = order.map((c) => {
    const role = roleOf.get(c) ?? null;
    const mine = run.requests.filter((r) => r.conversation === c);
    const nth = order.filter((o) => roleOf.get(o) === role).indexOf(c) + 1;
    return {
      name: `${role ?? '?'}${count(role) > 1 ? `#${nth}` : ''}`,
      requests: mine.length,
      inputTokens: mine.reduce((n, r) => n + tokensOf(r.chars), 0),
      warrenToolTokens: mine.reduce((n, r) => n + tokensOf(r.warrenToolChars), 0),
      otherToolTokens: mine.reduce((n, r) => n + tokensOf(r.otherToolChars), 0),
      sigtermTurns: mine.filter((r) => !r.side && r.lastInput.includes('[SIGTERM]')).length,
    };
  });
  sessions.sort((a, b) => (a.name === 'lead' ? -1 : b.name === 'lead' ? 1 : a.name.localeCompare(b.name)));
  // Side requests of no known conversation still count towards the totals.
  const orphans = run.requests.filter((r) => !order.includes(r.conversation));
  if (orphans.length > 0)
    sessions.push({
      name: 'other',
      requests: orphans.length,
      inputTokens: orphans.reduce((n, r) => n + tokensOf(r.chars), 0),
      warrenToolTokens: orphans.reduce((n, r) => n + tokensOf(r.warrenToolChars), 0),
      otherToolTokens: orphans.reduce((n, r) => n + tokensOf(r.otherToolChars), 0),
      sigtermTurns: 0,
    });
  const sum = (k: Exclude<keyof SessionFigures, 'name'>) => sessions.reduce((n, s) => n + s[k], 0);

  const teamTasks = new Set(
    run.events
      .filter((e) => e.type === 'task.created' && e.payload.parent === run.leadTask)
      .map((e) => String(e.payload.task)),
  );
  const outcomes =
    run.events.filter(
      (e) =>
        e.type === 'task.status' &&
        teamTasks.has(String(e.payload.task)) &&
        ['complete', 'failed', 'cancelled'].includes(String(e.payload.to)),
    ).length +
    run.events.filter((e) => e.type === 'task.escalated' && teamTasks.has(String(e.payload.task))).length;
  const wakeUps = run.events.filter(
    (e) => e.type === 'session.input' && e.session_id === run.leadSession,
  ).length;

  const decisionReached = (['C', 'D'] as const).filter((l) =>
    run.requests.some((r) => r.role === l && r.firstInput.includes(DECISION)),
  );
  const a = run.answers[0];
  return {
    sessions,
    totals: {
      requests: sum('requests'),
      inputTokens: sum('inputTokens'),
      warrenToolTokens: sum('warrenToolTokens'),
      otherToolTokens: sum('otherToolTokens'),
      sigtermTurns: sum('sigtermTurns'),
    },
    lead: { wakeUps, outcomes },
    decisionReached,
    answer: a
      ? `exit ${a.code}: ${(a.stdout.trim() || a.stderr.trim()).split('\n')[0]!.replace(/esc_[0-9a-z]+/gi, 'esc_…')}`
      : 'no escalation seen',
  };
}

/** The events of one type, oldest first. */
export const ofType = (events: Ev[], type: string) => events.filter((e) => e.type === type);
