import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import type { z } from 'zod';
import { yaml } from '../util/yaml.ts';
import { ConfigError } from './errors.ts';
import { CONFIG_FILES, CONFIG_KEYS } from './keys.ts';
import { fileSchema } from './schema.ts';

/** The config file: found in the data dir (or named explicitly), parsed, validated, flattened. */

/**
 * Which file to read: the one named (it must exist), else the one in the data dir, else none.
 * Two candidates in the data dir is an error: which one wins would be a guess.
 */
export function findConfigFile(dataDir: string, named: string | undefined): string | null {
  if (named !== undefined) {
    if (!existsSync(named)) throw new ConfigError(`config file ${named} does not exist`);
    return named;
  }
  const present = CONFIG_FILES.map((f) => join(dataDir, f)).filter((f) => existsSync(f));
  if (present.length > 1) {
    throw new ConfigError(`more than one config file in ${dataDir}: ${present.join(', ')}; keep one`);
  }
  return present[0] ?? null;
}

/** The file's settings by key path (`limits.maxDepth` → 4). Errors name the file and the key. */
export function readConfigFile(file: string): Map<string, unknown> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw new ConfigError(`${file}: cannot read: ${(error as Error).message}`);
  }
  const data = parseText(file, text);
  const result = fileSchema().safeParse(data ?? {});
  if (!result.success) {
    throw new ConfigError(result.error.issues.map((issue) => `${file}: ${describeIssue(issue)}`).join('\n'));
  }
  return flatten(result.data as Record<string, unknown>);
}

function parseText(file: string, text: string): unknown {
  const json = file.endsWith('.json');
  try {
    return json ? JSON.parse(text) : yaml().parse(text, { prettyErrors: true });
  } catch (error) {
    const what = json ? 'not valid JSON' : 'not valid YAML';
    throw new ConfigError(`${file}: ${what}: ${(error as Error).message.split('\n')[0]}`);
  }
}

/** `limits.maxDepth: expected a number …`, with the known keys when the key is unknown. */
function describeIssue(issue: z.core.$ZodIssue): string {
  const at = issue.path.map(String).join('.');
  if (issue.code === 'unrecognized_keys') {
    const known = knownUnder(at);
    return issue.keys
      .map((k) => `${at ? `${at}.` : ''}${k}: unknown key; expected one of: ${known.join(', ')}`)
      .join('\n');
  }
  if (at === '' && issue.code === 'invalid_type') return `expected an object of settings (${issue.message})`;
  return `${at || '(top level)'}: ${issue.message}`;
}

/** The keys a file may hold directly under `prefix` (`""` is the top level). */
function knownUnder(prefix: string): string[] {
  const depth = prefix ? prefix.split('.').length : 0;
  const names = CONFIG_KEYS.filter(
    (k) => !k.notInFile && (prefix ? k.path.startsWith(`${prefix}.`) : true),
  ).map((k) => k.path.split('.')[depth]!);
  return [...new Set(names)];
}

/** Nested objects into key paths; a leaf is whatever the key table names (lists and maps included). */
function flatten(data: Record<string, unknown>): Map<string, unknown> {
  const out = new Map<string, unknown>();
  for (const key of CONFIG_KEYS) {
    let node: unknown = data;
    for (const part of key.path.split('.')) {
      node = node && typeof node === 'object' ? (node as Record<string, unknown>)[part] : undefined;
    }
    if (node !== undefined) out.set(key.path, node);
  }
  return out;
}
