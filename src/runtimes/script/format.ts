import { readFileSync } from 'node:fs';
import YAML from 'yaml';
import { z } from 'zod';
import { invalid } from '../../kernel/errors.ts';

const isRegExp = (s: string) => {
  try {
    new RegExp(s);
    return true;
  } catch {
    return false;
  }
};

/** A script: the steps a deterministic agent plays, each one a syscall or a pause. */
const fdRef = z.union([z.number().int().nonnegative(), z.string()]);
const step = z.union([
  z.strictObject({ say: z.string() }),
  z.strictObject({ reply: z.string() }),
  z.strictObject({
    spawn: z
      .object({
        as: z.string().optional(),
        runtime: z.string().default('script'),
        title: z.string().optional(),
        prompt: z.string().optional(),
        pipe: z.enum(['sync', 'async', 'detach']).optional(),
        parentClose: z.enum(['reparent', 'terminate', 'sigterm']).optional(),
        script: z.unknown().optional(),
        config: z.record(z.string(), z.unknown()).optional(),
      })
      .strict(),
  }),
  z.strictObject({ write: z.strictObject({ fd: fdRef, message: z.string() }) }),
  z.strictObject({
    read: z
      .object({ fd: fdRef, as: z.string().optional(), timeoutMs: z.number().int().positive().optional() })
      .strict(),
  }),
  // End the turn and take the next input; with `match`, inputs whose text does not match are passed over.
  z.strictObject({
    wait: z
      .strictObject({
        as: z.string().optional(),
        match: z.string().refine(isRegExp, 'not a valid regular expression').optional(),
      })
      .default({}),
  }),
  z.strictObject({ close: z.strictObject({ fd: fdRef, force: z.boolean().optional() }) }),
  z.strictObject({
    create_stream: z.strictObject({
      name: z.string(),
      selfEcho: z.boolean().optional(),
      as: z.string().optional(),
    }),
  }),
  z.strictObject({
    attach: z
      .object({
        fd: fdRef,
        target: z.string(),
        permission: z.enum(['r', 'w', 'rw']).default('rw'),
        deliveryMode: z.enum(['sync', 'async', 'detach']).default('async'),
        as: z.string().optional(),
      })
      .strict(),
  }),
  z.strictObject({
    share: z
      .object({
        fd: fdRef.optional(),
        streamName: z.string().optional(),
        permission: z.enum(['r', 'w', 'rw']).optional(),
        deliveryMode: z.enum(['sync', 'async', 'detach']).optional(),
      })
      .strict(),
  }),
  z.strictObject({ sleep: z.number().int().nonnegative() }),
  // A standing agent: wait for input, say something about it (with $input), forever.
  z.strictObject({ listen: z.strictObject({ say: z.string().optional() }).default({}) }),
  z.strictObject({
    call: z
      .object({
        syscall: z.string(),
        input: z.record(z.string(), z.unknown()).default({}),
        as: z.string().optional(),
      })
      .strict(),
  }),
  z.strictObject({ exit: z.enum(['completed', 'crashed']).default('completed') }),
]);

export const scriptSchema = z.object({ steps: z.array(step) }).strict();
export type Script = z.infer<typeof scriptSchema>;
export type Step = Script['steps'][number];

/** A script from a spawn's config: `script` (object, JSON or YAML text) or `file` (a path). */
export function loadScript(config: Record<string, unknown>): Script {
  let raw = config.script;
  if (raw === undefined && typeof config.file === 'string') {
    try {
      raw = readFileSync(config.file, 'utf8');
    } catch (error) {
      throw invalid(`cannot read script file ${config.file}: ${(error as Error).message}`);
    }
  }
  if (raw === undefined) throw invalid('the script runtime needs config.script (steps) or config.file');
  if (typeof raw === 'string') {
    try {
      raw = YAML.parse(raw);
    } catch (error) {
      throw invalid(`script is neither JSON nor YAML: ${(error as Error).message}`);
    }
  }
  const parsed = scriptSchema.safeParse(raw);
  if (!parsed.success) throw invalid(`bad script: ${z.prettifyError(parsed.error)}`);
  return parsed.data;
}
