import { z } from 'zod';

/**
 * The coordinator's settings (the config file's `plugins.coordinator`), with the seed's
 * defaults. Environment variables with the seed's names override them (env.ts).
 */
const ms = z.number().int().positive();

export const sinkConfig = z.discriminatedUnion('type', [
  z.object({ type: z.literal('redis'), url: z.string().url() }),
  z.object({
    type: z.literal('nats'),
    servers: z.string().min(1),
    /** The JetStream stream that holds the topics (created if missing). */
    stream: z.string().min(1).max(200).default('CARACAL'),
  }),
  z.object({ type: z.literal('webhook'), url: z.string().url(), secret: z.string().min(16) }),
]);
export type SinkConfig = z.infer<typeof sinkConfig>;

export const coordinatorConfig = z
  .object({
    limits: z
      .object({
        maxDepth: z.number().int().positive().default(10),
        maxChildren: z.number().int().positive().default(10),
        maxPerZone: z.number().int().positive().default(50),
        maxPerApplication: z.number().int().positive().default(200),
      })
      .default({ maxDepth: 10, maxChildren: 10, maxPerZone: 50, maxPerApplication: 200 }),
    outbox: z
      .object({
        intervalMs: ms.default(1000),
        batchSize: z.number().int().positive().max(10_000).default(50),
        maxAttempts: z.number().int().positive().default(10),
        /** The first retry's delay; each next one doubles, capped at maxBackoffMs. */
        backoffMs: ms.default(500),
        maxBackoffMs: ms.default(60_000),
        /** Prefix of every topic (tests give each run its own). */
        topicPrefix: z.string().max(100).default(''),
        sinks: z.array(sinkConfig).max(10).default([]),
      })
      .default({
        intervalMs: 1000,
        batchSize: 50,
        maxAttempts: 10,
        backoffMs: 500,
        maxBackoffMs: 60_000,
        topicPrefix: '',
        sinks: [],
      }),
    ttlSweepIntervalMs: ms.default(60_000),
    /** The deadline enforcer (and the invocation dispatcher, and the health watcher). */
    deadlineSweepIntervalMs: ms.default(5000),
    retentionCleanupIntervalMs: ms.default(900_000),
    outboxRetentionDays: z.number().positive().default(7),
    delegationRetentionDays: z.number().positive().default(90),
    /** A service with no heartbeat for this long becomes unhealthy by itself. */
    healthSilenceMs: ms.default(60_000),
  })
  .default({
    limits: { maxDepth: 10, maxChildren: 10, maxPerZone: 50, maxPerApplication: 200 },
    outbox: {
      intervalMs: 1000,
      batchSize: 50,
      maxAttempts: 10,
      backoffMs: 500,
      maxBackoffMs: 60_000,
      topicPrefix: '',
      sinks: [],
    },
    ttlSweepIntervalMs: 60_000,
    deadlineSweepIntervalMs: 5000,
    retentionCleanupIntervalMs: 900_000,
    outboxRetentionDays: 7,
    delegationRetentionDays: 90,
    healthSilenceMs: 60_000,
  });
export type CoordinatorConfig = z.infer<typeof coordinatorConfig>;

export const TOPICS = {
  sessionsRevoke: 'caracal.sessions.revoke',
  policyInvalidate: 'caracal.policy.invalidate',
} as const;
