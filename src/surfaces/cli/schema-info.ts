import type { z } from 'zod';

/**
 * What the CLI needs to know about one input field, read from a zod v4 schema.
 * All zod introspection lives here so a zod upgrade touches one file.
 */
export type FieldKind = 'boolean' | 'number' | 'string' | 'enum' | 'json';

export interface FieldInfo {
  name: string;
  kind: FieldKind;
  required: boolean;
  default?: unknown;
  /** For `enum`: the allowed values. */
  choices?: string[];
  /** For `json`: true when the field takes structured data only (record, object, array); false for `unknown`. */
  strictJson?: boolean;
  description?: string;
}

interface Def {
  type: string;
  innerType?: z.ZodType;
  in?: z.ZodType;
  out?: z.ZodType;
  options?: z.ZodType[];
  entries?: Record<string, string | number>;
  values?: unknown[];
  defaultValue?: unknown;
}

const defOf = (schema: z.ZodType): Def => (schema as unknown as { _zod: { def: Def } })._zod.def;

const WRAPPERS = new Set(['optional', 'nullable', 'default', 'prefault', 'readonly', 'catch', 'nonoptional']);
const NUMBERS = new Set(['number', 'int', 'bigint']);
const STRUCTURED = new Set(['record', 'object', 'array', 'tuple', 'map', 'set']);

/** The fields of an object schema, in declaration order; any other schema has none. */
export function inputFields(schema: z.ZodType): FieldInfo[] {
  const shape = (schema as unknown as { shape?: Record<string, z.ZodType> }).shape;
  if (defOf(schema).type !== 'object' || !shape) return [];
  return Object.entries(shape).map(([name, field]) => fieldInfo(name, field));
}

export function fieldInfo(name: string, schema: z.ZodType): FieldInfo {
  let current = schema;
  let required = true;
  let defaultValue: unknown;
  let description: string | undefined;
  for (;;) {
    description ??= current.description;
    const def = defOf(current);
    if (WRAPPERS.has(def.type) && def.innerType) {
      if (def.type === 'default' || def.type === 'prefault') defaultValue = def.defaultValue;
      if (def.type !== 'nonoptional') required = false;
      current = def.innerType;
    } else if (def.type === 'pipe' && def.in && def.out) {
      // z.preprocess is pipe(transform, target): the target says what the field takes.
      // Any other pipe (x.transform(...)) takes what its input side takes.
      current = defOf(def.in).type === 'transform' ? def.out : def.in;
    } else {
      break;
    }
  }
  const info: FieldInfo = { name, required, ...classify(current) };
  if (defaultValue !== undefined) info.default = defaultValue;
  if (description !== undefined) info.description = description;
  return info;
}

function classify(schema: z.ZodType): Pick<FieldInfo, 'kind' | 'choices' | 'strictJson'> {
  const def = defOf(schema);
  if (def.type === 'boolean') return { kind: 'boolean' };
  if (NUMBERS.has(def.type)) return { kind: 'number' };
  if (def.type === 'string') return { kind: 'string' };
  if (def.type === 'enum' && def.entries)
    return { kind: 'enum', choices: Object.values(def.entries).map(String) };
  if (def.type === 'literal' && def.values) return { kind: 'enum', choices: def.values.map(String) };
  if (def.type === 'union' && def.options) {
    const kinds = def.options.map((o) => fieldInfo('', o).kind);
    // A union that takes text on the wire (string | string[], ISO time | epoch ms) is a string flag.
    if (kinds.every((k) => k === 'number')) return { kind: 'number' };
    if (kinds.includes('string')) return { kind: 'string' };
  }
  return { kind: 'json', strictJson: STRUCTURED.has(def.type) };
}
