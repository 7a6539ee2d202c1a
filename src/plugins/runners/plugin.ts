import { z } from 'zod';
import { definePlugin } from '../../contract/plugin.ts';
import { RunnerHub } from './hub.ts';
import { type RunnersDb, runnersMigrations } from './schema.ts';
import { type RunnersInstance, runnerSyscalls } from './syscalls.ts';
import { RunnerTokens } from './tokens.ts';

const config = z
  .object({
    /** Reanimate a dropped runner's sessions at once on another runner of the same name. */
    failover: z.boolean().default(true),
    /**
     * How often the server beats each runner. A runner's agents end, and the server takes the
     * runner for gone, when it has missed five beats (six, for the server): docs/runners.md.
     */
    heartbeatMs: z.number().int().min(50).max(60_000).default(1000),
  })
  .default({ failover: true, heartbeatMs: 1000 });

/**
 * Remote runners: `warren runner` processes on other hosts connect out to this server over a
 * WebSocket and run agents there; each runner name is the environment `runner:<name>`.
 * See docs/runners.md.
 */
export const runnersPlugin = definePlugin<z.output<typeof config>, RunnersDb>({
  name: 'runners',
  version: '0.1.0',
  summary: 'remote runners: environments runner:<name> that run agents on other hosts over a WebSocket',
  migrations: runnersMigrations,
  syscalls: runnerSyscalls,
  config,
  async start({ kernel, tables, config, log }): Promise<RunnersInstance> {
    const tokens = new RunnerTokens(tables, kernel.ids);
    const hub = new RunnerHub(kernel, tokens, log, {
      failover: config?.failover ?? true,
      heartbeatMs: config?.heartbeatMs ?? 1000,
    });
    await hub.refresh();
    kernel.provideEnvironments('runner', hub);
    return {
      hub,
      tokens,
      upgrades: {
        handle: (req, socket, head) => hub.upgrade(req, socket, head),
        close: () => void hub.stop(),
      },
      phases: [
        {
          // The backstop: sessions of an online runner left suspended by a missed reanimation.
          name: 'reanimate',
          // Seed 001's environment-reconciliation, for runners: connection state squared with reality.
          seed: 'environment-reconciliation',
          run: async () => {
            await hub.refresh();
            for (const name of hub.names()) await hub.reanimate(name);
          },
        },
      ],
      stop: () => hub.stop(),
    };
  },
});
