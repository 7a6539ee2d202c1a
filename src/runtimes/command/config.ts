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
});

/** The argv to run. */
export function readCommand(spec: AgentSpec, runtime = 'command'): [string, ...string[]] {
  parseConfig(runtime, schema, spec.config);
  return commandLine(spec, runtime);
}
