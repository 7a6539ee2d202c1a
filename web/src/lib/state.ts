import type { Session } from './types.ts';

/**
 * What a session is, in the words an operator reads: its status while it lives, its end
 * reason once stopped (the server records both), and `waiting` while its task waits on an
 * operator's answer. Each state has its own glyph, so no state is told by colour alone.
 */
export type SessionState =
  | 'pending'
  | 'running'
  | 'idle'
  | 'waiting'
  | 'suspended'
  | 'completed'
  | 'terminated'
  | 'killed'
  | 'crashed'
  | 'expired'
  | 'budget-exceeded'
  | 'reaped'
  | 'stopped';

export function sessionState(s: Pick<Session, 'status' | 'endReason'>, waiting = false): SessionState {
  if (s.status === 'stopped')
    return s.endReason ? (s.endReason.replace('_', '-') as SessionState) : 'stopped';
  if (waiting && s.status !== 'suspended') return 'waiting';
  return s.status as SessionState;
}

/** Glyphs by shape: live ones round or triangular, clean ends square or ticked, bad ends warnings. */
const GLYPHS: Record<string, string> = {
  pending: '◌',
  ready: '◌',
  held: '◍',
  running: '▶',
  idle: '○',
  waiting: '◷',
  stuck: '◔',
  review: '⚑',
  suspended: '‖',
  completed: '✓',
  complete: '✓',
  terminated: '■',
  cancelled: '■',
  killed: '✕',
  crashed: '⚠',
  failed: '⚠',
  expired: '⊘',
  'budget-exceeded': '$',
  reaped: '⊖',
  stopped: '■',
  open: '?',
  answered: '✓',
  withdrawn: '■',
  paused: '‖',
  enabled: '▶',
  closed: '■',
};

export const glyph = (state: string) => GLYPHS[state] ?? '•';

/** States that call for the operator: shown on the home view. */
export const BAD_ENDS: ReadonlySet<string> = new Set(['crashed', 'budget-exceeded']);
