import { z } from 'zod';
import { yaml } from '../../util/yaml.ts';
import { invalid } from '../../vocab/errors.ts';
import { readScriptFile } from './file.ts';
import { type ScriptLimits, scriptLimits } from './limits.ts';

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
        // Absent: the persona's runtime, else script (ipc_spawn decides).
        runtime: z.string().optional(),
        personaId: z.string().optional(),
        title: z.string().optional(),
        prompt: z.string().optional(),
        pipe: z.enum(['sync', 'async', 'detach']).optional(),
        parentClose: z.enum(['reparent', 'terminate', 'sigterm']).optional(),
        script: z.unknown().optional(),
        config: z.record(z.string(), z.unknown()).optional(),
        budget: z.record(z.string(), z.number()).optional(),
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
  // Report usage as a model runtime would after a turn (tests of budgets: the script is the deterministic agent).
  z.strictObject({
    usage: z.strictObject({
      inputTokens: z.number().int().nonnegative().optional(),
      outputTokens: z.number().int().nonnegative().optional(),
      costUsd: z.number().nonnegative().optional(),
    }),
  }),
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

/**
 * A script from a spawn's config: `script` (object, JSON or YAML text) or `file` (a path,
 * read under `limits.roots` only). Everything is capped (see limits.ts). What a file holds
 * never appears in an error: its parse errors give a line and column, its schema errors
 * the step and field, and nothing of the values or unknown keys.
 */
export function loadScript(config: Record<string, unknown>, limits: ScriptLimits = scriptLimits()): Script {
  let raw = config.script;
  const fromFile = raw === undefined && typeof config.file === 'string';
  if (fromFile) raw = readScriptFile(config.file as string, limits.roots, limits.maxFileBytes);
  else if (raw === undefined) throw invalid('the script runtime needs config.script (steps) or config.file');
  else {
    const bytes = typeof raw === 'string' ? Buffer.byteLength(raw) : (JSON.stringify(raw)?.length ?? 0);
    if (bytes > limits.maxScriptBytes) {
      throw invalid(`script is ${bytes} bytes; the limit is ${limits.maxScriptBytes}`);
    }
  }
  if (typeof raw === 'string') raw = parseText(raw, fromFile);
  const steps = (raw as { steps?: unknown } | null)?.steps;
  // Counted before validating: a huge script is refused without walking it.
  if (Array.isArray(steps) && steps.length > limits.maxSteps) {
    throw invalid(`script has ${steps.length} steps; the limit is ${limits.maxSteps}`);
  }
  const parsed = scriptSchema.safeParse(raw);
  if (!parsed.success) {
    throw invalid(`bad script: ${issues(parsed.error, raw, fromFile)}`);
  }
  for (const [i, step] of parsed.data.steps.entries()) {
    if ('wait' in step && (step.wait.match?.length ?? 0) > limits.maxPatternLength) {
      throw invalid(`step ${i + 1}: wait.match is longer than ${limits.maxPatternLength} characters`);
    }
  }
  return parsed.data;
}

function parseText(text: string, fromFile: boolean): unknown {
  try {
    return yaml().parse(text);
  } catch (error) {
    if (!fromFile) throw invalid(`script is neither JSON nor YAML: ${(error as Error).message}`);
    // The parser's message quotes the offending source line: a file's position only.
    const at = (error as { linePos?: Array<{ line: number; col: number }> }).linePos?.[0];
    throw invalid(`script file is neither JSON nor YAML${at ? ` (line ${at.line}, column ${at.col})` : ''}`);
  }
}

/**
 * Schema issues, one line each, a step that matches no kind explained by the kind its key
 * names. `blind` (a file): only where (step numbers, the schema's own field names) and the
 * kind of problem, never a value or an unknown key.
 */
function issues(error: z.ZodError, raw: unknown, blind: boolean): string {
  const where = (path: PropertyKey[]) =>
    path
      .map((p) => (typeof p === 'number' ? String(p + 1) : !blind || FIELDS.has(String(p)) ? String(p) : '…'))
      .join('.') || 'the script';
  const line = (path: PropertyKey[], i: z.core.$ZodIssue) =>
    `${where(path)}: ${blind ? i.code.replaceAll('_', ' ') : i.message}`;
  const out: string[] = [];
  for (const issue of error.issues.slice(0, 5)) {
    const [top, index] = issue.path;
    if (issue.code === 'invalid_union' && top === 'steps' && typeof index === 'number') {
      const rawStep = (raw as { steps: unknown[] }).steps[index];
      const kind =
        rawStep && typeof rawStep === 'object'
          ? step.options.find((o) => Object.keys(o.shape).some((k) => k in rawStep))
          : undefined;
      if (!kind) {
        out.push(`${where(issue.path)}: not a known step (${STEP_KINDS.join(', ')})`);
        continue;
      }
      const inner = kind.safeParse(rawStep).error?.issues ?? [];
      if (inner.length > 0) {
        for (const i of inner.slice(0, 3)) out.push(line([...issue.path, ...i.path], i));
        continue;
      }
    }
    out.push(line(issue.path, issue));
  }
  return out.join('; ');
}

const STEP_KINDS = step.options.flatMap((o) => Object.keys(o.shape));

/** Every field name the schema itself defines: safe to show, unlike a file's own keys. */
const FIELDS = new Set(['steps', ...step.options.flatMap((o) => fieldsOf(o))]);

function fieldsOf(t: unknown): string[] {
  if (t instanceof z.ZodObject) return Object.entries(t.shape).flatMap(([k, v]) => [k, ...fieldsOf(v)]);
  if (t instanceof z.ZodDefault || t instanceof z.ZodOptional) return fieldsOf(t.unwrap());
  return [];
}
