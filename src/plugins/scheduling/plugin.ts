import { z } from 'zod';
import { definePlugin } from '../../contract/plugin.ts';
import type { LogEvent } from '../../store/events.ts';
import { defaultSchedulerOptions, Scheduler } from './engine.ts';
import { schedulingMigrations } from './migrations.ts';
import type { SchedulingDb } from './schema.ts';
import { type SchedulingInstance, scheduleSyscalls } from './syscalls.ts';

const settings = z
  .object({
    graceMs: z.number().int().min(0).optional(),
    batch: z.number().int().min(1).max(10_000).optional(),
    maxSleepMs: z.number().int().min(10).optional(),
    leaseMs: z.number().int().min(1000).optional(),
    concurrency: z.number().int().min(1).max(256).optional(),
  })
  .strict();

/**
 * Scheduling: cron expressions, intervals and one-shots that create a task, spawn a
 * session or write to a stream. A timer armed for the next due schedule plus a reconcile
 * phase fire them; each fire is logged with its schedule's advance in one transaction.
 * See docs/scheduling.md.
 */
export const schedulingPlugin = definePlugin<z.output<typeof settings> | undefined, SchedulingDb>({
  name: 'scheduling',
  version: '0.1.0',
  summary: 'cron, interval and one-shot schedules that create tasks, spawn sessions or write to streams',
  dependsOn: ['orchestration'],
  migrations: schedulingMigrations,
  syscalls: scheduleSyscalls,
  config: settings.optional(),
  async start({ kernel, tables, call, log, config }): Promise<SchedulingInstance> {
    const scheduler = new Scheduler(kernel, tables, call, log, { ...defaultSchedulerOptions, ...config });
    await scheduler.start();
    return {
      phases: scheduler.phases,
      onCommit: (events: readonly LogEvent[]) => scheduler.onCommit(events),
      onAnyCommit: (events: readonly LogEvent[]) => scheduler.onAnyCommit(events),
      scheduler,
      tables,
      stop: () => scheduler.stop(),
    };
  },
});
