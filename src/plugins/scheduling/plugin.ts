import { z } from 'zod';
import { definePlugin } from '../../contract/plugin.ts';
import type { LogEvent } from '../../store/events.ts';
import { defaultSchedulerOptions, Scheduler } from './engine.ts';
import { schedulingMigrations } from './migrations.ts';
import type { SchedulingDb } from './schema.ts';
import { defaultScheduleLimits, followEnds, type ScheduleLimits, stopped } from './standing.ts';
import { type SchedulingInstance, scheduleSyscalls } from './syscalls.ts';

const settings = z
  .object({
    graceMs: z.number().int().min(0).optional(),
    batch: z.number().int().min(1).max(10_000).optional(),
    maxSleepMs: z.number().int().min(10).optional(),
    leaseMs: z.number().int().min(1000).optional(),
    concurrency: z.number().int().min(1).max(256).optional(),
    /** Schedules one session may hold (src/plugins/scheduling/standing.ts). */
    maxPerSession: z.number().int().min(1).optional(),
    /** The shortest period of a session's schedule. */
    minIntervalMs: z.number().int().min(0).optional(),
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
    const { maxPerSession, minIntervalMs, ...engine } = config ?? {};
    const scheduler = new Scheduler(kernel, tables, call, log, { ...defaultSchedulerOptions, ...engine });
    const limits: ScheduleLimits = {
      maxPerSession: maxPerSession ?? defaultScheduleLimits.maxPerSession,
      minIntervalMs: minIntervalMs ?? defaultScheduleLimits.minIntervalMs,
    };
    await scheduler.start();
    return {
      phases: scheduler.phases,
      onCommit: (events: readonly LogEvent[]) => {
        scheduler.onCommit(events);
        // A creator's end disables its schedules or hands them to its parent. Most batches end
        // no session: they cost a scan here, not an async call.
        const ends = stopped(events);
        if (ends.length === 0) return;
        void followEnds(kernel, tables, ends).catch((err: unknown) =>
          log.error({ err }, 'scheduling: following a creator’s end failed'),
        );
      },
      onAnyCommit: (events: readonly LogEvent[]) => scheduler.onAnyCommit(events),
      scheduler,
      tables,
      limits,
      stop: () => scheduler.stop(),
    };
  },
});
