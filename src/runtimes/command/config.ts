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

/**
 * The argv to run, and what it says of its turns (`config.turns`): true, it is handed nothing
 * before its startup idle however slowly it starts; false, it is handed input at once; unset,
 * it is judged by its first lines (agent.ts, QUIET_START_MS).
 */
export function readCommand(
  spec: AgentSpec,
  runtime = 'command',
): { argv: [string, ...string[]]; turns: boolean | undefined } {
  const { turns } = parseConfig(runtime, schema, spec.config);
  return { argv: commandLine(spec, runtime), turns };
}
