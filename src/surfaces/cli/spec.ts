import type { HttpBinding } from '../../contract/syscall.ts';
import type { FieldInfo } from './schema-info.ts';

/** One syscall as the CLI sees it: JSON-safe data, so the build can ship it (manifest.ts). */
export interface SyscallSpec {
  /** The syscall's name, e.g. `streams_attach`. */
  name: string;
  words: string[];
  /** Help section. */
  group: string;
  summary: string;
  description?: string;
  examples: string[];
  http?: HttpBinding;
  positional: FieldInfo[];
  flags: FlagSpec[];
  /** Exit codes picked by an output field (CliBinding.exit). */
  exit?: { field: string; codes: Record<string, number>; unreachable?: number };
}

export interface FlagSpec {
  /** The kebab-case flag, without dashes: `self-echo`. */
  flag: string;
  /** Extra names from the binding's `flags` (e.g. `perm` for `permission`). */
  aliases: string[];
  field: FieldInfo;
}
