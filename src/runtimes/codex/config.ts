import { z } from 'zod';
import { parseConfig } from '../errors.ts';
import { type CodexSettings, isTable, SANDBOX_MODES, type TomlValue, toml } from './args.ts';

const text = z.string({ error: 'must be a non-empty string' }).min(1, 'must be a non-empty string');

/** A table of codex settings: every value must be expressible in TOML (`toml` says which is not). */
const table = z
  .custom<Record<string, TomlValue>>((v) => isTable(v), { error: 'must be an object' })
  .refine((v) => toml(v) !== '');

/** `config` of a `codex` spawn (unknown keys are left to other layers and ignored here). */
const schema = z.object({
  codexPath: text.optional(),
  baseUrl: text.optional(),
  apiKeyEnv: text.optional(),
  model: text.optional(),
  codexHome: text.optional(),
  sandbox: z.enum(SANDBOX_MODES, { error: `must be one of ${SANDBOX_MODES.join(', ')}` }).optional(),
  provider: table.optional(),
  codexConfig: table.optional(),
});

/** Read and check the codex settings in a spawn's `config` (null counts as absent). */
export function settingsOf(config: Record<string, unknown>): CodexSettings {
  const present = Object.fromEntries(Object.entries(config).filter(([, v]) => v !== null && v !== undefined));
  return parseConfig('codex', schema, present) as CodexSettings;
}
