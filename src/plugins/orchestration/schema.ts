import type { Kysely } from 'kysely';
import type { PluginTables, PluginTx } from '../../contract/plugin.ts';

export const TASK_STATUSES = [
  'pending',
  'ready',
  'running',
  /** An escalation of it is open: it waits for the operator's answer, whatever its session does. */
  'waiting',
  'review',
  'complete',
  'failed',
  'cancelled',
] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];
/** Statuses a task does not leave on its own (`task start` may retry a failed or cancelled one). */
export const TASK_DONE: readonly TaskStatus[] = ['complete', 'failed', 'cancelled'];

export interface TasksTable {
  id: string;
  zone: string;
  /** null only for a zone's root task (the tree's init). */
  parent_id: string | null;
  title: string;
  prompt: string;
  persona_id: string | null;
  /** Where its sessions run: a runner name (`local`). */
  environment: string;
  /** JSON: what its sessions are spawned with (runtime, config, model, tools, grants, cwd …). */
  spawn: string;
  /** JSON budget for its sessions' subtree, or null. */
  budget: string | null;
  /** 1: an idle session with a result moves the task to `review`, not `complete`. */
  review: number;
  /** What a failure does: `fail` (stay failed) or `escalate` (open an escalation too). */
  on_failure: 'fail' | 'escalate';
  /** 1: created held; `task start` releases it. */
  held: number;
  status: TaskStatus;
  /** Its latest session (live or not); null before the first dispatch. */
  session_id: string | null;
  result: string | null;
  /** Why it failed or was cancelled, or what it waits on. */
  reason: string | null;
  attempts: number;
  created_by: string;
  created_at: number;
  updated_at: number;
  ended_at: number | null;
}

export interface TaskDepsTable {
  task_id: string;
  depends_on: string;
}

export interface EscalationsTable {
  id: string;
  zone: string;
  task_id: string;
  /** The session that asked (null for an escalation the task's failure policy opened). */
  session_id: string | null;
  question: string;
  /** JSON: what the operator needs to answer (last message, end reason …). */
  context: string;
  status: 'open' | 'answered' | 'withdrawn';
  answer: string | null;
  answered_by: string | null;
  created_at: number;
  answered_at: number | null;
}

/** A durable, task-keyed room attachment: re-applied to each new session of the task. */
export interface TaskAttachmentsTable {
  task_id: string;
  stream_id: string;
  zone: string;
  permission: 'r' | 'w' | 'rw';
  mode: 'sync' | 'async' | 'detach';
  created_by: string;
  created_at: number;
}

/** The orchestration plugin's own tables: all it reads and writes directly. */
export interface OrchestrationDb {
  orchestration_tasks: TasksTable;
  orchestration_task_deps: TaskDepsTable;
  orchestration_escalations: EscalationsTable;
  orchestration_task_attachments: TaskAttachmentsTable;
}

/** The plugin's handle on its tables. */
export type Tables = PluginTables<OrchestrationDb>;
/** A write unit, as the plugin sees it. */
export type Tx = PluginTx<OrchestrationDb>;
/** Reads of its tables: `tables.reader`, or a unit's `tx.db` (which sees the unit's own writes). */
export type Db = Kysely<OrchestrationDb>;
