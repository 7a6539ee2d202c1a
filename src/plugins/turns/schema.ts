import type { PluginTables, PluginTx } from '../../contract/plugin.ts';

export const TURN_STATUSES = ['queued', 'active', 'completed', 'failed', 'cancelled', 'superseded'] as const;
export type TurnStatus = (typeof TURN_STATUSES)[number];
/** Statuses a turn never leaves. */
export const TURN_TERMINAL: readonly TurnStatus[] = ['completed', 'failed', 'cancelled', 'superseded'];
export const isTerminal = (s: string): boolean => (TURN_TERMINAL as readonly string[]).includes(s);

/** A session the bridge answers for: adopted or started by a coordinator, in a namespace. */
export interface BridgeSessionsTable {
  session_id: string;
  zone: string;
  /** The namespace: both '' when none was configured (never "any"). */
  profile: string;
  repo: string;
  /** The canonical working directory artifacts are read under. */
  cwd: string;
  /** claude-code | codex | acp | command | script | tmux */
  kind: string;
  /** warren: a warren session; tmux: an adopted tmux pane (visible mode sessions are warren ones). */
  mode: string;
  /** The tmux target (`session:window.pane`) of a visible or adopted session. */
  tmux_target: string | null;
  /** The git worktree this session runs in, and the repository it belongs to. */
  worktree: string | null;
  project: string | null;
  /** keep | remove: what happens to the worktree when the session stops. */
  worktree_policy: string | null;
  created_by: string;
  created_at: number;
}

export interface TurnsTable {
  id: string;
  zone: string;
  session_id: string;
  status: TurnStatus;
  prompt: string;
  /** plan | execute | team for a delegation; null for a plain prompt. */
  workflow: string | null;
  final_text: string | null;
  final_format: string | null;
  /** runtime_end_of_turn | report_status */
  final_source: string | null;
  final_artifact: string | null;
  final_truncated: number;
  /** JSON array of evidence paths. */
  evidence: string;
  error: string | null;
  blocker: string | null;
  superseded_by: string | null;
  created_by: string;
  created_at: number;
  started_at: number | null;
  ended_at: number | null;
}

export interface QuestionsTable {
  id: string;
  zone: string;
  session_id: string;
  turn_id: string | null;
  text: string;
  /** JSON array of choices; null: free form. */
  options: string | null;
  status: 'open' | 'answered';
  answer: string | null;
  answered_by: string | null;
  created_at: number;
  answered_at: number | null;
}

export interface ReportsTable {
  id: string;
  zone: string;
  session_id: string;
  turn_id: string | null;
  status: string;
  summary: string;
  blocker: string | null;
  evidence: string;
  created_by: string;
  created_at: number;
}

/** The turns plugin's tables, and only those: what `ctx.tables` reads and writes. */
export interface TurnsDb {
  turns_sessions: BridgeSessionsTable;
  turns: TurnsTable;
  turns_questions: QuestionsTable;
  turns_reports: ReportsTable;
}

/** The plugin's handle on its tables (`ctx.tables`), and a write unit over them. */
export type TurnsTables = PluginTables<TurnsDb>;
export type TurnsTx = PluginTx<TurnsDb>;
