import { z } from 'zod';
import type { SpawnRequest } from '../../kernel/types.ts';
import { ipcSpawn } from '../../syscalls/ipc.ts';

/**
 * What a task's sessions are spawned with: the pieces of `ipc_spawn` that describe the agent
 * (taken from its schema, not copied). The task supplies title, prompt, persona, budget,
 * environment (the runner) and the pipe; without a runtime, the persona's (else `script`).
 */
export const spawnTemplate = ipcSpawn.input
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
    tools: true,
    grants: true,
  })
  .extend({
    runtime: z
      .string()
      .min(1)
      .max(64)
      .optional()
      .describe("How the agent runs (default: the persona's, else script)"),
  })
  .strict();

export type SpawnTemplate = z.output<typeof spawnTemplate>;

/** Most bytes a stored template may take (scripts included). */
export const MAX_TEMPLATE_BYTES = 256 * 1024;

/** The spawn request a template stands for (as ipc_spawn builds one). */
export function spawnRequestOf(t: SpawnTemplate): SpawnRequest {
  const config: Record<string, unknown> = { ...(t.config ?? {}) };
  if (t.script !== undefined) config.script = t.script;
  if (t.command !== undefined) config.command = t.command;
  return {
    // Absent: the persona's runtime, else script (the spawn path decides).
    ...(t.runtime !== undefined ? { runtime: t.runtime } : {}),
    config,
    ...(t.cwd !== undefined ? { cwd: t.cwd } : {}),
    ...(t.model !== undefined ? { model: t.model } : {}),
    ...(t.env !== undefined ? { env: t.env } : {}),
    ...(t.secretEnv !== undefined ? { secretEnv: t.secretEnv } : {}),
    ...(t.maxTurns !== undefined ? { maxTurns: t.maxTurns } : {}),
    ...(t.ttlSeconds !== undefined ? { ttlSeconds: t.ttlSeconds } : {}),
    ...(t.parentClose !== undefined ? { parentClose: t.parentClose } : {}),
    ...(t.wakeOnInput !== undefined ? { wakeOnInput: t.wakeOnInput } : {}),
    ...(t.tools !== undefined ? { tools: t.tools } : {}),
    ...(t.grants !== undefined
      ? { grants: Object.fromEntries(Object.entries(t.grants).filter(([, v]) => v !== undefined)) }
      : {}),
  };
}
