import type { BridgeSessionsTable, QuestionsTable, ReportsTable, TurnsTable } from './schema.ts';

/** Rows as the syscalls answer them (snake_case, as the seed's contract reads). */

export const turnRecord = (t: TurnsTable) => ({
  /** Seed 004's turn record version. */
  schema_version: 1 as const,
  turn_id: t.id,
  session_id: t.session_id,
  status: t.status,
  prompt: t.prompt,
  workflow: t.workflow,
  final_response:
    t.final_source === null
      ? null
      : {
          text: t.final_text,
          format: t.final_format ?? 'text',
          source: t.final_source,
          artifact_path: t.final_artifact,
          truncated: t.final_truncated === 1,
        },
  evidence: JSON.parse(t.evidence) as string[],
  error: t.error,
  blocker: t.blocker,
  superseded_by: t.superseded_by,
  created_by: t.created_by,
  created_at: Number(t.created_at),
  started_at: t.started_at === null ? null : Number(t.started_at),
  ended_at: t.ended_at === null ? null : Number(t.ended_at),
});
export type TurnRecord = ReturnType<typeof turnRecord>;

export const questionRecord = (q: QuestionsTable) => ({
  question_id: q.id,
  session_id: q.session_id,
  turn_id: q.turn_id,
  text: q.text,
  options: q.options === null ? null : (JSON.parse(q.options) as string[]),
  status: q.status,
  answer: q.answer,
  answered_by: q.answered_by,
  created_at: Number(q.created_at),
  answered_at: q.answered_at === null ? null : Number(q.answered_at),
});

export const reportRecord = (r: ReportsTable) => ({
  report_id: r.id,
  session_id: r.session_id,
  turn_id: r.turn_id,
  status: r.status,
  summary: r.summary,
  blocker: r.blocker,
  evidence: JSON.parse(r.evidence) as string[],
  created_by: r.created_by,
  created_at: Number(r.created_at),
});

export const sessionRecord = (s: BridgeSessionsTable) => ({
  session_id: s.session_id,
  profile: s.profile,
  repo: s.repo,
  cwd: s.cwd,
  kind: s.kind,
  mode: s.mode,
  tmux_target: s.tmux_target,
  worktree: s.worktree,
  project: s.project,
  created_at: Number(s.created_at),
});

/** Text cut to at most `cap` UTF-8 bytes (never inside a character). */
export function capText(text: string, cap: number): { text: string; truncated: boolean } {
  const buf = Buffer.from(text, 'utf8');
  if (buf.length <= cap) return { text, truncated: false };
  let end = cap;
  // Back off continuation bytes so the cut lands on a character boundary.
  while (end > 0 && ((buf[end] ?? 0) & 0xc0) === 0x80) end -= 1;
  return { text: buf.subarray(0, end).toString('utf8'), truncated: true };
}
