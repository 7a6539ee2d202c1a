import { readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { SyscallCommand } from './commands.ts';
import { UsageError } from './errors.ts';
import { GLOBAL_NAMES, GLOBAL_OPTIONS, type GlobalName, type Globals } from './globals.ts';
import type { FieldInfo } from './schema-info.ts';

/**
 * Turns a command's arguments into the syscall's input: kinds, choices and required
 * arguments are checked here; the rest of the schema is the server's, and `inputProblem`
 * names the flag behind each issue it reports.
 */

type OptionConfig = { type: 'string' | 'boolean'; short?: string };

export interface ParsedCommand {
  input: Record<string, unknown>;
  globals: Globals;
}

/** The parse options of the global options `names` (default: all of them). */
export const globalParseOptions = (
  names: readonly GlobalName[] = GLOBAL_NAMES,
): Record<string, OptionConfig> =>
  Object.fromEntries(
    names.map((name) => {
      const o = GLOBAL_OPTIONS[name];
      return [name, { type: o.type, ...('short' in o ? { short: o.short } : {}) }];
    }),
  );

export function parseCommandArgs(cmd: SyscallCommand, args: string[], cwd: string): ParsedCommand {
  const options = globalParseOptions();
  for (const spec of cmd.flags) {
    for (const name of [spec.flag, ...spec.aliases]) {
      options[name] = { type: spec.field.kind === 'boolean' ? 'boolean' : 'string' };
    }
  }
  const booleans = new Set(
    cmd.flags.filter((f) => f.field.kind === 'boolean').flatMap((f) => [f.flag, ...f.aliases]),
  );
  const { args: plain, explicit } = booleanValues(args, booleans);
  const { values, positionals } = runParseArgs(cmd, plain, options);
  for (const [name, v] of explicit) values[name] = v;
  const globals = pickGlobals(values);
  const input: Record<string, unknown> = {};
  cmd.positional.forEach((field, i) => {
    const raw = positionals[i];
    if (raw === undefined) {
      if (field.required) throw new UsageError(`missing argument <${field.name}>`, cmd.words);
      return;
    }
    input[field.name] = convert(field, raw, `<${field.name}>`, cwd, cmd);
  });
  if (positionals.length > cmd.positional.length) {
    throw new UsageError(`unexpected argument "${positionals[cmd.positional.length]}"`, cmd.words);
  }
  for (const spec of cmd.flags) {
    const given = [spec.flag, ...spec.aliases].filter((n) => values[n] !== undefined);
    if (given.length > 1) {
      throw new UsageError(`--${given.join(' and --')} are the same option; give one`, cmd.words);
    }
    const raw = given[0] === undefined ? undefined : values[given[0]];
    if (raw === undefined) {
      if (spec.field.required) throw new UsageError(`missing --${spec.flag}`, cmd.words);
      continue;
    }
    input[spec.field.name] =
      typeof raw === 'boolean' ? raw : convert(spec.field, raw, `--${spec.flag}`, cwd, cmd);
  }
  return { input, globals };
}

/**
 * `--flag true|false` and `--flag=true|false` for a boolean flag, as a person writes them
 * (parseArgs takes only the bare `--flag`): the value is taken out of the arguments and
 * given back as the flag's value. A bare `--flag` stays true.
 */
function booleanValues(
  args: readonly string[],
  booleans: ReadonlySet<string>,
): { args: string[]; explicit: Map<string, boolean> } {
  const out: string[] = [];
  const explicit = new Map<string, boolean>();
  for (let i = 0; i < args.length; i++) {
    const a = args[i]!;
    if (a === '--') {
      out.push(...args.slice(i));
      break;
    }
    const inline = /^--([^=]+)=(true|false)$/.exec(a);
    if (inline && booleans.has(inline[1]!)) {
      explicit.set(inline[1]!, inline[2] === 'true');
      continue;
    }
    const next = args[i + 1];
    if (a.startsWith('--') && booleans.has(a.slice(2)) && (next === 'true' || next === 'false')) {
      explicit.set(a.slice(2), next === 'true');
      i++;
      continue;
    }
    out.push(a);
  }
  return { args: out, explicit };
}

function runParseArgs(cmd: SyscallCommand, args: string[], options: Record<string, OptionConfig>) {
  try {
    return parseArgs({ args, options, strict: true, allowPositionals: true });
  } catch (error) {
    const e = error as Error & { code?: string };
    if (e.code === 'ERR_PARSE_ARGS_UNKNOWN_OPTION') {
      const name = /'([^']+)'/.exec(e.message)?.[1] ?? e.message;
      throw new UsageError(`unknown option ${name}`, cmd.words);
    }
    if (e.code?.startsWith('ERR_PARSE_ARGS')) throw new UsageError(e.message, cmd.words);
    throw error;
  }
}

function pickGlobals(values: Record<string, string | boolean | (string | boolean)[] | undefined>): Globals {
  const globals: Record<string, unknown> = {};
  for (const name of Object.keys(GLOBAL_OPTIONS))
    if (values[name] !== undefined) globals[name] = values[name];
  return globals as Globals;
}

function convert(field: FieldInfo, raw: string, label: string, cwd: string, cmd: SyscallCommand): unknown {
  switch (field.kind) {
    case 'boolean':
      if (raw === 'true' || raw === 'false') return raw === 'true';
      throw new UsageError(`${label} must be true or false, got "${raw}"`, cmd.words);
    case 'number': {
      const n = Number(raw);
      if (raw.trim() === '' || !Number.isFinite(n)) {
        throw new UsageError(`${label} expects a number, got "${raw}"`, cmd.words);
      }
      return n;
    }
    case 'enum':
      if (!field.choices?.includes(raw)) {
        throw new UsageError(
          `${label} must be one of ${field.choices?.join(', ')} (got "${raw}")`,
          cmd.words,
        );
      }
      return raw;
    case 'string':
      return raw;
    case 'json':
      return parseJsonValue(field, raw, label, cwd, cmd);
  }
}

/** JSON text, or `@path` for a file's text. Free-form fields keep text that is not JSON (YAML scripts). */
function parseJsonValue(
  field: FieldInfo,
  raw: string,
  label: string,
  cwd: string,
  cmd: SyscallCommand,
): unknown {
  let text = raw;
  if (raw.startsWith('@')) {
    const file = resolve(cwd, raw.slice(1));
    try {
      text = readFileSync(file, 'utf8');
    } catch (error) {
      throw new UsageError(`${label}: cannot read ${file}: ${(error as Error).message}`, cmd.words);
    }
  }
  try {
    return JSON.parse(text);
  } catch (error) {
    if (!field.strictJson) return text;
    throw new UsageError(`${label} expects JSON (or @file): ${(error as Error).message}`, cmd.words);
  }
}

export interface InputIssue {
  path: string;
  message: string;
}

/** The server's `invalid_input` issues as a usage error naming the flags (undefined: nothing to name). */
export function inputProblem(
  cmd: SyscallCommand,
  input: Record<string, unknown>,
  issues: readonly InputIssue[],
): UsageError | undefined {
  if (issues.length === 0) return undefined;
  const labels = new Map<string, string>([
    ...cmd.positional.map((f): [string, string] => [f.name, `<${f.name}>`]),
    ...cmd.flags.map((f): [string, string] => [f.field.name, `--${f.flag}`]),
  ]);
  const problems = issues.map((issue) => {
    const [head, ...rest] = issue.path.split('.').filter(Boolean);
    if (head === undefined) return issue.message;
    const label = (labels.get(head) ?? head) + rest.map((p) => `.${p}`).join('');
    if (input[head] === undefined) return `missing ${label}`;
    return `${label}: ${issue.message}`;
  });
  return new UsageError(problems.join('; '), cmd.words);
}
