export const SCHEDULE_KINDS = ['cron', 'interval', 'once'] as const;
export type ScheduleKind = (typeof SCHEDULE_KINDS)[number];
export const MISSED_POLICIES = ['skip', 'run-once', 'run-all'] as const;
export type MissedPolicy = (typeof MISSED_POLICIES)[number];
export const OVERLAP_POLICIES = ['allow', 'skip-if-running', 'queue'] as const;
export type OverlapPolicy = (typeof OVERLAP_POLICIES)[number];
/**
 * A fire's life: `pending` (logged, its action not yet done), `queued` (waiting for the
 * running fire of its schedule), `running` (its task or session is not done), then `ok`,
 * `error` or `skipped` (overlap, or its schedule gone).
 */
export const FIRE_STATUSES = ['pending', 'queued', 'running', 'ok', 'error', 'skipped'] as const;
export type FireStatus = (typeof FIRE_STATUSES)[number];
/** Fires that keep a schedule "running" for its overlap policy. */
export const FIRE_ACTIVE: readonly FireStatus[] = ['pending', 'running'];

export interface SchedulesTable {
  id: string;
  zone: string;
  name: string;
  kind: ScheduleKind;
  /** kind cron: the expression (5 or 6 fields) and its IANA time zone. */
  cron: string | null;
  tz: string | null;
  /** kind interval: the period. */
  interval_ms: number | null;
  /** kind once: when. */
  at: number | null;
  /** JSON ScheduleAction: what a fire does. */
  action: string;
  enabled: number;
  /** null: nothing left to fire (a one-shot that fired). */
  next_fire_at: number | null;
  missed: MissedPolicy;
  /** run-all: at most this many fires for the times missed during one downtime. */
  missed_cap: number;
  overlap: OverlapPolicy;
  /** JSON Principal: who the fires act as (the creator). */
  owner: string;
  created_by: string;
  created_at: number;
  updated_at: number;
  fires: number;
  last_fire_at: number | null;
  last_fire_id: string | null;
  last_outcome: FireStatus | null;
}

export interface ScheduleFiresTable {
  id: string;
  schedule_id: string;
  zone: string;
  /** The time it was due (for run-now: when it was asked). */
  due_at: number;
  /** When it was logged (the lateness is fired_at - due_at). */
  fired_at: number;
  /** 1: run-now; 0: the schedule's own time (unique per schedule and due time). */
  manual: number;
  status: FireStatus;
  /** The task or session it made, while and after it runs. */
  target: string | null;
  error: string | null;
  /** The run of the server executing its action, and since when (a lease on PostgreSQL). */
  node: string | null;
  claimed_at: number | null;
  finished_at: number | null;
}

/** The scheduling plugin's tables. */
export interface SchedulingDb {
  scheduling_schedules: SchedulesTable;
  scheduling_fires: ScheduleFiresTable;
}
