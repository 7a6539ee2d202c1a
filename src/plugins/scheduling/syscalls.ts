import { z } from 'zod';
import type { PluginInstance, PluginTables } from '../../contract/plugin.ts';
import * as s from '../../contract/schemas.ts';
import { defineSyscall, type Syscall, type SyscallContext } from '../../contract/syscall.ts';
import { spawnTemplate, streamMessage, taskTemplate } from './action.ts';
import type { Scheduler } from './engine.ts';
import {
  adoptSchedule,
  createSchedule,
  deleteSchedule,
  listSchedules,
  MAX_MISSED_CAP,
  runNow,
  setEnabled,
  showSchedule,
  updateSchedule,
} from './ops.ts';
import {
  FIRE_STATUSES,
  MISSED_POLICIES,
  OVERLAP_POLICIES,
  SCHEDULE_KINDS,
  type ScheduleFiresTable,
  type SchedulesTable,
  type SchedulingDb,
} from './schema.ts';
import type { ScheduleLimits } from './standing.ts';

/** The schedule syscalls: operators (CLI, REST) and orchestrator sessions (MCP tools) call the same ones. */

/** What the scheduling plugin's syscalls reach through `ctx.self`. */
export interface SchedulingInstance extends PluginInstance {
  scheduler: Scheduler;
  tables: PluginTables<SchedulingDb>;
  /** Caps on a session's schedules (src/plugins/scheduling/standing.ts). */
  limits: ScheduleLimits;
}

const self = (ctx: SyscallContext) => ctx.self as SchedulingInstance;
const scheduler = (ctx: SyscallContext) => self(ctx).scheduler;
const tables = (ctx: SyscallContext) => self(ctx).tables;

const scheduleId = z.string().min(1).max(200).describe('A schedule id');

const fireView = z.object({
  id: z.string(),
  dueAt: z.number(),
  firedAt: z.number(),
  manual: z.boolean(),
  status: z.enum(FIRE_STATUSES),
  target: z.string().nullable(),
  error: z.string().nullable(),
  finishedAt: z.number().nullable(),
  node: z.string().nullable().describe('The server run that ran its action'),
});
const scheduleView = z.object({
  id: z.string(),
  name: z.string(),
  kind: z.enum(SCHEDULE_KINDS),
  cron: z.string().nullable(),
  tz: z.string().nullable(),
  intervalMs: z.number().nullable(),
  at: z.number().nullable(),
  action: z.record(z.string(), z.unknown()),
  enabled: z.boolean(),
  nextFireAt: z.number().nullable(),
  missed: z.enum(MISSED_POLICIES),
  missedCap: z.number(),
  overlap: z.enum(OVERLAP_POLICIES),
  createdBy: z.string(),
  createdAt: z.number(),
  fires: z.number(),
  lastFireAt: z.number().nullable(),
  lastOutcome: z.enum(FIRE_STATUSES).nullable(),
});

/** A schedule as the syscalls give it (the web UI reads this type too). */
export type ScheduleView = z.output<typeof scheduleView>;

const view = (r: SchedulesTable): z.input<typeof scheduleView> => ({
  id: r.id,
  name: r.name,
  kind: r.kind,
  cron: r.cron,
  tz: r.tz,
  intervalMs: r.interval_ms === null ? null : Number(r.interval_ms),
  at: r.at === null ? null : Number(r.at),
  action: JSON.parse(r.action) as Record<string, unknown>,
  enabled: Number(r.enabled) === 1,
  nextFireAt: r.next_fire_at === null ? null : Number(r.next_fire_at),
  missed: r.missed,
  missedCap: Number(r.missed_cap),
  overlap: r.overlap,
  createdBy: r.created_by,
  createdAt: Number(r.created_at),
  fires: Number(r.fires),
  lastFireAt: r.last_fire_at === null ? null : Number(r.last_fire_at),
  lastOutcome: r.last_outcome,
});
const fireOf = (f: ScheduleFiresTable): z.input<typeof fireView> => ({
  id: f.id,
  dueAt: Number(f.due_at),
  firedAt: Number(f.fired_at),
  manual: Number(f.manual) === 1,
  status: f.status,
  target: f.target,
  error: f.error,
  finishedAt: f.finished_at === null ? null : Number(f.finished_at),
  node: f.node,
});

/** When and what: shared by create and update (update takes any subset). */
const timingFields = {
  cron: z
    .string()
    .min(1)
    .max(200)
    .optional()
    .describe('A cron expression: 5 fields (minute hour day month weekday) or 6 (seconds first)'),
  tz: z
    .string()
    .min(1)
    .max(64)
    .optional()
    .describe('The IANA time zone of the cron expression (default UTC)'),
  intervalMs: z.coerce
    .number()
    .int()
    .min(1000)
    .max(366 * 24 * 3_600_000)
    .optional()
    .describe('A fixed interval, in milliseconds (at least 1000)'),
  at: z
    .union([z.number().int().nonnegative(), z.string().min(1).max(64)])
    .optional()
    .describe('One shot: when (epoch ms or ISO 8601)'),
  nowIfPast: s.optionalFlag.describe('A one-shot time in the past fires now instead of being refused'),
};
const actionFields = {
  task: s
    .inputOf(taskTemplate, "Action: create a task: task_create's input ({ title, prompt, spawn … })")
    .optional(),
  spawn: s
    .inputOf(
      spawnTemplate,
      "Action: spawn a session: ipc_spawn's input (a personaId and a prompt, typically)",
    )
    .optional(),
  stream: streamMessage.optional().describe('Action: write a message to a stream you hold with w'),
};
const policyFields = {
  missed: z
    .enum(MISSED_POLICIES)
    .optional()
    .describe(
      'After downtime: skip the missed fires, run-once for all of them, or run-all (up to missedCap)',
    ),
  missedCap: z.coerce
    .number()
    .int()
    .positive()
    .max(MAX_MISSED_CAP)
    .optional()
    .describe('run-all: at most this many (default 10)'),
  overlap: z
    .enum(OVERLAP_POLICIES)
    .optional()
    .describe("While the previous fire's task or session runs: allow another, skip-if-running, or queue"),
};

export const scheduleCreate = defineSyscall({
  name: 'schedule_create',
  group: 'schedules',
  summary:
    'Create a schedule: a cron expression, an interval or a one-shot that creates a task, spawns a session or writes to a stream',
  description:
    'Give one timing (cron with tz, intervalMs, or at) and one action (task, spawn or stream). Fires act as you. A one-shot in the past is refused unless nowIfPast.',
  input: z.object({
    name: s.title.min(1).optional().describe('A name to know it by (default its id)'),
    ...timingFields,
    ...actionFields,
    ...policyFields,
    paused: s.optionalFlag.describe('Create it paused (schedule_resume starts it)'),
  }),
  output: z.object({ schedule: scheduleView }),
  callers: ['session', 'operator'],
  http: { method: 'POST', path: '/v1/schedules' },
  cli: {
    command: ['schedule', 'create'],
    positional: ['name'],
    examples: [
      'warren schedule create nightly --cron "0 2 * * *" --tz Europe/Paris --task \'{"title":"nightly report","prompt":"Summarise the day"}\'',
      'warren schedule create ping --interval-ms 60000 --stream \'{"stream":"ops","message":"still here"}\'',
      'warren schedule create once --at 2030-01-01T09:00:00Z --spawn \'{"personaId":"reviewer","prompt":"Review the backlog"}\'',
    ],
  },
  async handler(ctx, i) {
    const row = await createSchedule(ctx.kernel, tables(ctx), ctx.principal, i, self(ctx).limits);
    scheduler(ctx).poke();
    return { schedule: view(row) };
  },
});

export const scheduleUpdate = defineSyscall({
  name: 'schedule_update',
  group: 'schedules',
  summary: 'Change a schedule: its name, timing, action, policies, or paused',
  input: z.object({
    id: scheduleId,
    name: s.title.min(1).optional().describe('A new name'),
    ...timingFields,
    ...actionFields,
    ...policyFields,
    paused: s.optionalFlag.describe('Pause (true) or resume (false) it'),
  }),
  output: z.object({ schedule: scheduleView }),
  callers: ['session', 'operator'],
  http: { method: 'POST', path: '/v1/schedules/:id' },
  cli: {
    command: ['schedule', 'update'],
    positional: ['id'],
    examples: ['warren schedule update sched_01j… --cron "*/15 * * * *"'],
  },
  async handler(ctx, i) {
    const { id, ...spec } = i;
    const row = await updateSchedule(ctx.kernel, tables(ctx), ctx.principal, id, spec, self(ctx).limits);
    scheduler(ctx).poke();
    return { schedule: view(row) };
  },
});

export const scheduleList = defineSyscall({
  name: 'schedule_list',
  group: 'schedules',
  summary: "List schedules (operators: the zone's; sessions: their own)",
  input: z.object({
    enabled: s.optionalFlag.describe('Only enabled (true) or paused (false) ones'),
    ...s.pageInput,
  }),
  output: z.object({ schedules: z.array(scheduleView), next: s.nextCursor }),
  callers: ['session', 'operator'],
  http: { method: 'GET', path: '/v1/schedules' },
  cli: {
    command: ['schedule', 'list'],
    examples: ['warren schedule list', 'warren schedule list --enabled false'],
  },
  async handler(ctx, i) {
    const r = await listSchedules(tables(ctx), ctx.principal, i);
    return { schedules: r.items.map(view), next: r.next };
  },
});

export const scheduleShow = defineSyscall({
  name: 'schedule_show',
  group: 'schedules',
  summary: 'One schedule and its latest fires, newest first',
  input: z.object({
    id: scheduleId,
    fires: z.coerce.number().int().min(0).max(200).optional().describe('How many fires (default 20)'),
  }),
  output: z.object({ schedule: scheduleView, fires: z.array(fireView) }),
  callers: ['session', 'operator'],
  http: { method: 'GET', path: '/v1/schedules/:id' },
  cli: { command: ['schedule', 'show'], positional: ['id'], examples: ['warren schedule show sched_01j…'] },
  async handler(ctx, i) {
    const r = await showSchedule(tables(ctx), ctx.principal, i.id, i.fires);
    return { schedule: view(r.row), fires: r.fires.map(fireOf) };
  },
});

const toggle = (name: 'schedule_pause' | 'schedule_resume', enabled: boolean) =>
  defineSyscall({
    name,
    group: 'schedules',
    summary: enabled
      ? 'Resume a paused schedule (what fell due while paused does not fire)'
      : 'Pause a schedule: it keeps its place and fires nothing until resumed',
    input: z.object({ id: scheduleId }),
    output: z.object({ schedule: scheduleView }),
    callers: ['session', 'operator'],
    http: { method: 'POST', path: `/v1/schedules/:id/${enabled ? 'resume' : 'pause'}` },
    cli: {
      command: ['schedule', enabled ? 'resume' : 'pause'],
      positional: ['id'],
      examples: [`warren schedule ${enabled ? 'resume' : 'pause'} sched_01j…`],
    },
    async handler(ctx, i) {
      const row = await setEnabled(tables(ctx), ctx.principal, i.id, enabled);
      scheduler(ctx).poke();
      return { schedule: view(row) };
    },
  });
export const schedulePause = toggle('schedule_pause', false);
export const scheduleResume = toggle('schedule_resume', true);

export const scheduleAdopt = defineSyscall({
  name: 'schedule_adopt',
  group: 'schedules',
  summary: 'Take a schedule over: its fires act as you from now on (a killed creator’s, disabled, for one)',
  input: z.object({ id: scheduleId }),
  output: z.object({ schedule: scheduleView }),
  callers: ['operator'],
  http: { method: 'POST', path: '/v1/schedules/:id/adopt' },
  cli: { command: ['schedule', 'adopt'], positional: ['id'], examples: ['warren schedule adopt sched_01j…'] },
  async handler(ctx, i) {
    return { schedule: view(await adoptSchedule(tables(ctx), ctx.principal, i.id)) };
  },
});

export const scheduleDelete = defineSyscall({
  name: 'schedule_delete',
  group: 'schedules',
  summary: 'Delete a schedule (its fires stay in the log)',
  input: z.object({ id: scheduleId }),
  output: z.object({ deleted: z.string() }),
  callers: ['session', 'operator'],
  http: { method: 'DELETE', path: '/v1/schedules/:id' },
  cli: {
    command: ['schedule', 'delete'],
    positional: ['id'],
    examples: ['warren schedule delete sched_01j…'],
  },
  async handler(ctx, i) {
    const row = await deleteSchedule(tables(ctx), ctx.principal, i.id);
    return { deleted: row.id };
  },
});

export const scheduleRunNow = defineSyscall({
  name: 'schedule_run_now',
  group: 'schedules',
  summary: 'Fire a schedule now, outside its timing (its overlap policy still applies)',
  input: z.object({ id: scheduleId }),
  output: z.object({ fire: fireView }),
  callers: ['session', 'operator'],
  http: { method: 'POST', path: '/v1/schedules/:id/run' },
  cli: {
    command: ['schedule', 'run-now'],
    positional: ['id'],
    examples: ['warren schedule run-now sched_01j…'],
  },
  async handler(ctx, i) {
    const fire = await runNow(ctx.kernel, tables(ctx), ctx.principal, i.id);
    await scheduler(ctx).recover();
    return { fire: fireOf(fire) };
  },
});

/**
 * arizuko's scheduler tools, by its names, for group sockets (seed 002's contract): the same
 * syscalls under a second name (same input and handler). A group socket acts as an operator
 * principal, so that is their one caller; they are in no MCP tool list but a group socket's
 * (beside warren's `task_*` they would read as tasks, and act on schedules), and the CLI and
 * REST have warren's names.
 */
const alias = (base: Syscall, name: string, summary: string): Syscall => {
  const { http: _http, cli: _cli, jobs: _jobs, ...rest } = base;
  return {
    ...rest,
    name,
    summary,
    description: `arizuko's name for ${base.name}. ${base.description ?? base.summary}`,
    callers: ['operator'],
    listed: false,
  };
};

export const scheduleSyscalls: readonly Syscall[] = [
  scheduleCreate,
  scheduleUpdate,
  scheduleList,
  scheduleShow,
  schedulePause,
  scheduleAdopt,
  scheduleResume,
  scheduleDelete,
  scheduleRunNow,
  alias(scheduleCreate, 'schedule_task', 'Schedule a task (cron, interval or one-shot): schedule_create'),
  alias(scheduleShow, 'get_task', 'One scheduled task and its latest fires: schedule_show'),
  alias(scheduleUpdate, 'update_task', 'Change a scheduled task (timing, action, paused …): schedule_update'),
  alias(scheduleDelete, 'cancel_task', 'Cancel (delete) a scheduled task: schedule_delete'),
  alias(scheduleList, 'list_tasks', 'List scheduled tasks: schedule_list'),
];
