import type {
  DeliveryMode,
  EndReason,
  FdsTable,
  ParentClose,
  Permission,
  SessionStatus,
  SessionsTable,
  StreamKind,
  StreamsTable,
} from '../store/schema.ts';
import { parseJson } from '../util/json.ts';
import type { Usage } from '../vocab/usage.ts';
import { type Breach, budgetOf, remainingOf, type SubtreeTotals, totalsOf } from './budget.ts';
import type { SessionContainment } from './containment.ts';
import type { Budget } from './types.ts';

/** The kernel's public shapes: what syscalls return. Rows never leave the kernel raw. */
export interface SessionInfo {
  id: string;
  zone: string;
  parentId: string | null;
  depth: number;
  status: SessionStatus;
  endReason: EndReason | null;
  /** Why it ended, in words (the crash's error, who killed it …). */
  endDetail: string | null;
  /** What a live agent is doing beyond its status ("retrying model API, attempt 3/10"). */
  activity: string | null;
  runtime: string;
  runner: string;
  title: string | null;
  parentClose: ParentClose;
  lastMessage: string | null;
  suspendReason: string | null;
  turns: number;
  /** Its own usage, as its runtime reported it. */
  usage: Usage;
  /** Usage of it and everything spawned under it, its own included (turns: the kernel's count). */
  subtreeUsage: SubtreeTotals;
  /** Its budget for its subtree, what is left of it, and its breach; null without one. */
  budget: BudgetInfo | null;
  /** The tools it may call; null: its tier's defaults. */
  tools: string[] | null;
  /** The persona it was spawned from; null: none. */
  persona: string | null;
  /** The model it runs; null: its runtime's default. */
  model: string | null;
  /** Its turn limit; null: none. */
  maxTurns: number | null;
  /**
   * How its agent is confined (docs/security.md): given by `session show` and a spawn's
   * answer, not by listings; null for sessions from before it was recorded.
   */
  containment?: SessionContainment | null;
  createdAt: number;
  updatedAt: number;
  endedAt: number | null;
}

export interface BudgetInfo {
  limits: Budget;
  /** What is left of each limit, at the time of the answer. */
  remaining: Budget;
  /** When its wall time runs out (spawn + wallMs); null without that limit. */
  deadline: number | null;
  /** The limit that was spent, once one was: its value, what was used, how much over. */
  exceeded: Breach | null;
}

export interface StreamInfo {
  id: string;
  zone: string;
  name: string;
  kind: StreamKind;
  owner: string;
  sessionId: string | null;
  selfEcho: boolean;
  createdAt: number;
  closedAt: number | null;
}

export interface FdInfo {
  fd: number;
  id: string;
  holder: string;
  streamId: string;
  streamName: string;
  permission: Permission;
  deliveryMode: DeliveryMode;
  cursor: number;
  owned: boolean;
  spawned: boolean;
  /** Messages on the stream past the cursor that are due to this holder. */
  pending: number;
}

export interface MessageView {
  seq: number;
  id: string;
  ts: number;
  streamId: string;
  from: string;
  text: string;
  kind: 'message' | 'signal';
  signal?: string;
  data?: unknown;
}

/** A session as callers see it; `now` is when the answer is given (what is left of a wall-time budget). */
export const sessionInfo = (r: SessionsTable, now: number): SessionInfo => ({
  id: r.id,
  zone: r.zone,
  parentId: r.parent_id,
  depth: r.depth,
  status: r.status,
  endReason: r.end_reason,
  endDetail: r.end_detail ?? null,
  activity: r.activity ?? null,
  runtime: r.runtime,
  runner: r.runner,
  title: r.title,
  parentClose: r.parent_close,
  lastMessage: r.last_message,
  suspendReason: r.suspend_reason,
  turns: r.turns,
  usage: parseJson<Usage>(r.usage, {}),
  subtreeUsage: totalsOf(r),
  budget: budgetInfo(r, now),
  tools: parseJson<string[] | null>(r.tools, null),
  persona: r.persona ?? null,
  model: r.model ?? null,
  maxTurns: r.max_turns ?? null,
  createdAt: Number(r.created_at),
  updatedAt: Number(r.updated_at),
  endedAt: r.ended_at === null ? null : Number(r.ended_at),
});

function budgetInfo(r: SessionsTable, now: number): BudgetInfo | null {
  const limits = budgetOf(r);
  if (!limits) return null;
  const createdAt = Number(r.created_at);
  // A stopped session's budget is measured at its end, not ever after.
  const at = r.ended_at === null ? now : Number(r.ended_at);
  return {
    limits,
    remaining: remainingOf(limits, totalsOf(r), createdAt, at),
    deadline: limits.wallMs === undefined ? null : createdAt + limits.wallMs,
    exceeded: parseJson<Breach | null>(r.budget_breach, null),
  };
}

export const streamInfo = (r: StreamsTable): StreamInfo => ({
  id: r.id,
  zone: r.zone,
  name: r.name,
  kind: r.kind,
  owner: r.owner,
  sessionId: r.session_id,
  selfEcho: r.self_echo === 1,
  createdAt: Number(r.created_at),
  closedAt: r.closed_at === null ? null : Number(r.closed_at),
});

export const RESERVED_PREFIXES = ['pipe:', 'lifecycle:', 'stdin:'] as const;
export const isReservedName = (name: string) => RESERVED_PREFIXES.some((p) => name.startsWith(p));

export const canRead = (p: Permission) => p === 'r' || p === 'rw';
export const canWrite = (p: Permission) => p === 'w' || p === 'rw';
/** Attenuation: `granted` is no more than `held`. */
export const permWithin = (granted: Permission, held: Permission) => held === 'rw' || granted === held;

export type FdRow = FdsTable;

/** A session with how its agent is contained (read from its spec, where the spawn recorded it). */
export const sessionDetail = (r: SessionsTable, now: number): SessionInfo => ({
  ...sessionInfo(r, now),
  containment: parseJson<{ containment?: SessionContainment }>(r.spec, {}).containment ?? null,
});
