import { z } from 'zod';
import type { SpawnRequest } from '../../kernel/types.ts';
import { spawnRequestOf as fromSpawnInput, spawnInput } from '../core/ipc.ts';

/**
 * What a task's sessions are spawned with: the pieces of `ipc_spawn` that describe the agent
 * (taken from its schema, not copied). The task supplies title, prompt, persona, budget,
 * environment (the runner) and the pipe; without a runtime, the persona's, else what `script`
 * or `command` imply, else the spawning session's own (an operator's: `script`); without a
 * job, `worker` (its task's tools; name `toolGroups` or `job` for more).
 */
export const spawnTemplate = spawnInput
  .pick({
    script: true,
    command: true,
    config: true,
    cwd: true,
    model: true,
    env: true,
    secretEnv: true,
    maxTurns: true,
    ttlSeconds: true,
    parentClose: true,
    wakeOnInput: true,
    job: true,
    toolGroups: true,
    tools: true,
    grants: true,
  })
  .extend({
    runtime: z
      .string()
      .min(1)
      .max(64)
      .optional()
      .describe(
        "How the agent runs (default: the persona's; else what `script` or `command` imply; else the creating session's own runtime, model and config; an operator's: script)",
      ),
  })
  .strict();

export type SpawnTemplate = z.output<typeof spawnTemplate>;

/** Most bytes a stored template may take (scripts included). */
export const MAX_TEMPLATE_BYTES = 256 * 1024;

/** The spawn request a template stands for (as ipc_spawn builds one). */
export const spawnRequestOf = (t: SpawnTemplate): SpawnRequest => fromSpawnInput(t);
