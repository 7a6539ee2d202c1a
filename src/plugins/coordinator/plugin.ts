import { definePlugin } from '../../contract/plugin.ts';
import { type CoordinatorConfig, coordinatorConfig } from './config.ts';
import { Coordinator } from './coordinator.ts';
import { withEnv } from './env.ts';
import { coordinatorMigrations } from './migrations.ts';
import type { CoordinatorDb } from './schema.ts';
import { agentSyscalls } from './syscalls-agents.ts';
import { delegationSyscalls } from './syscalls-delegations.ts';
import { workSyscalls } from './syscalls-work.ts';

/**
 * The Coordinator API of Caracal (seed 003) on warren's model: an agent session is a warren
 * session with a few fields more; limits and idempotency ride the kernel's spawn
 * transaction; every event for the outside goes through a transactional outbox to Redis
 * Streams, NATS JetStream or webhooks. See docs/coordinator.md.
 */
export const coordinatorPlugin = definePlugin<CoordinatorConfig, CoordinatorDb>({
  name: 'coordinator',
  jwtCallers: true,
  version: '0.1.0',
  summary: 'zone-scoped agent sessions with spawn limits and idempotency, and a transactional outbox',
  migrations: coordinatorMigrations,
  syscalls: [...agentSyscalls, ...workSyscalls, ...delegationSyscalls],
  config: coordinatorConfig,
  start({ kernel, tables, config, log }) {
    // The seed's variable names (OUTBOX_INTERVAL_MS …) override the config file.
    const c = new Coordinator(kernel, tables, withEnv(config, process.env), log);
    c.start();
    return c;
  },
});
