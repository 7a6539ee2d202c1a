import { z } from 'zod';
import type { Syscall } from './syscall.ts';

/**
 * A syscall's input as a JSON schema for a tool list, without the words that say nothing: a
 * model pays for every character on every request. Dropped: zod's integer bounds that are
 * only the safe-integer range, `propertyNames: { type: 'string' }` (JSON keys are strings),
 * `additionalProperties: {}` (the default) and the `$schema` line.
 */
export function toolInputSchema(s: Syscall): Record<string, unknown> & { type: 'object' } {
  const json = z.toJSONSchema(s.input, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  delete json.$schema;
  return { type: 'object', ...(compact(json) as Record<string, unknown>) };
}

function compact(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(compact);
  if (!node || typeof node !== 'object') return node;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(node)) {
    if (k === 'maximum' && v === Number.MAX_SAFE_INTEGER) continue;
    if (k === 'minimum' && v === Number.MIN_SAFE_INTEGER) continue;
    if (k === 'propertyNames' && isOnly(v, { type: 'string' })) continue;
    if (k === 'additionalProperties' && isOnly(v, {})) continue;
    out[k] = compact(v);
  }
  return out;
}

const isOnly = (v: unknown, shape: Record<string, unknown>) =>
  !!v && typeof v === 'object' && JSON.stringify(v) === JSON.stringify(shape);
