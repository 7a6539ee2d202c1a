import { z } from 'zod';
import { parseConfig } from '../errors.ts';
import { commandLine } from '../process.ts';
import type { AgentSpec } from '../types.ts';

/** `config` of a `command` spawn: the command line (a string, or an array) and more arguments. */
const schema = z.looseObject({
  command: z.union([z.string().trim().min(1), z.array(z.string()).min(1)], {
    error: 'must be a command line (a string) or an array of strings',
  }),
  args: z.array(z.string(), { error: 'must be an array of strings' }).optional(),
  turns: z.boolean({ error: 'must be true (it reports turns) or false (it never does)' }).optional(),
});

/** The argv to run. */
export function readCommand(spec: AgentSpec, runtime = 'command'): [string, ...string[]] {
  parseConfig(runtime, schema, spec.config);
  return commandLine(spec, runtime);
}

/**
 * Whether it says it reports turns (`config.turns`): true, it is handed nothing before its
 * startup idle however slowly it starts; false, it is handed input at once; unset, it is judged
 * by its first lines (agent.ts, QUIET_START_MS).
 */
export function readTurns(spec: AgentSpec): boolean | undefined {
  const turns = (spec.config as { turns?: unknown } | undefined)?.turns;
  return typeof turns === 'boolean' ? turns : undefined;
}
