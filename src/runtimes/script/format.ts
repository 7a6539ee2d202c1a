import { z } from 'zod';
import { yaml } from '../../util/yaml.ts';
import { invalid } from '../../vocab/errors.ts';
import { readScriptFile } from './file.ts';
import { type ScriptLimits, scriptLimits } from './limits.ts';
import { patternError } from './pattern.ts';

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
        match: z.string().optional(),
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
 *
 * `parsed`: inline scripts already parsed, by their text (a spawn parses its script, then its
 * start does again): the caller's to bound (ScriptRuntime keeps a few). Files are read anew.
 */
export function loadScript(
  config: Record<string, unknown>,
  limits: ScriptLimits = scriptLimits(),
  parsed?: Map<string, Script>,
): Script {
  let raw = config.script;
  const fromFile = raw === undefined && typeof config.file === 'string';
  let text: string | undefined;
  if (fromFile) raw = readScriptFile(config.file as string, limits.roots, limits.maxFileBytes);
  else if (raw === undefined)
    throw invalid('the script runtime needs a script: give `script` (its steps) or config.file');
  else {
    text = typeof raw === 'string' ? raw : (JSON.stringify(raw) ?? '');
    const bytes = typeof raw === 'string' ? Buffer.byteLength(raw) : text.length;
    if (bytes > limits.maxScriptBytes) {
      throw invalid(`script is ${bytes} bytes; the limit is ${limits.maxScriptBytes}`);
    }
    const known = parsed?.get(text);
    if (known) return known;
  }
  if (typeof raw === 'string') raw = parseText(raw, fromFile);
  const steps = (raw as { steps?: unknown } | null)?.steps;
  // Counted before validating: a huge script is refused without walking it.
  if (Array.isArray(steps) && steps.length > limits.maxSteps) {
    throw invalid(`script has ${steps.length} steps; the limit is ${limits.maxSteps}`);
  }
  const script = parseScript(raw, fromFile);
  for (const [i, step] of script.steps.entries()) {
    if ('wait' in step && (step.wait.match?.length ?? 0) > limits.maxPatternLength) {
      throw invalid(`step ${i + 1}: wait.match is longer than ${limits.maxPatternLength} characters`);
    }
    // Compiled after the length check: a pattern over the cap is refused without parsing it.
    const bad = 'wait' in step && step.wait.match !== undefined ? patternError(step.wait.match) : undefined;
    if (bad) throw invalid(`step ${i + 1}: wait.match is ${bad}`);
  }
  if (parsed && text !== undefined) parsed.set(text, script);
  return script;
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

/** The script's outline: `steps` and nothing else; each step is checked by its kind (below). */
const outline = z.object({ steps: z.array(z.unknown()) }).strict();

/**
 * Each step checked by the schema of the kind its key names, rather than by the union
 * trying every kind in turn: that took 6–8 ms for 1,000 steps, on the event loop, at spawn
 * and again at start. The same answer and the same messages.
 */
function parseScript(raw: unknown, blind: boolean): Script {
  const top = outline.safeParse(raw);
  if (!top.success)
    throw invalid(
      `bad script: ${top.error.issues
        .slice(0, 5)
        .map((i) => line(i.path, i, blind))
        .join('; ')}`,
    );
  const out: string[] = [];
  const steps: Step[] = [];
  for (const [i, rawStep] of top.data.steps.entries()) {
    const keys =
      rawStep && typeof rawStep === 'object' && !Array.isArray(rawStep) ? Object.keys(rawStep) : [];
    const kind = keys.map((k) => KINDS.get(k)).find((k) => k !== undefined);
    if (!kind) {
      out.push(`${where(['steps', i], blind)}: not a known step (${STEP_KINDS.join(', ')})`);
    } else {
      const parsed = kind.safeParse(rawStep);
      if (parsed.success) steps.push(parsed.data as Step);
      else out.push(...parsed.error.issues.slice(0, 3).map((x) => line(['steps', i, ...x.path], x, blind)));
    }
    if (out.length >= 5) break;
  }
  if (out.length > 0) throw invalid(`bad script: ${out.slice(0, 5).join('; ')}`);
  return { steps };
}

/**
 * Where an issue is, one line each. `blind` (a file): only where (step numbers, the
 * schema's own field names) and the kind of problem, never a value or an unknown key.
 */
const where = (path: PropertyKey[], blind: boolean) =>
  path
    .map((p) => (typeof p === 'number' ? String(p + 1) : !blind || FIELDS.has(String(p)) ? String(p) : '…'))
    .join('.') || 'the script';

const line = (path: PropertyKey[], i: z.core.$ZodIssue, blind: boolean) =>
  `${where(path, blind)}: ${blind ? i.code.replaceAll('_', ' ') : i.message}`;

const STEP_KINDS = step.options.flatMap((o) => Object.keys(o.shape));

/** Each step kind's schema, by its one key. */
const KINDS = new Map(step.options.map((o) => [Object.keys(o.shape)[0]!, o as z.ZodType]));

/** Every field name the schema itself defines: safe to show, unlike a file's own keys. */
const FIELDS = new Set(['steps', ...step.options.flatMap((o) => fieldsOf(o))]);

function fieldsOf(t: unknown): string[] {
  if (t instanceof z.ZodObject) return Object.entries(t.shape).flatMap(([k, v]) => [k, ...fieldsOf(v)]);
  if (t instanceof z.ZodDefault || t instanceof z.ZodOptional) return fieldsOf(t.unwrap());
  return [];
}
