import { CommandRuntime } from './command.ts';
import { ScriptRuntime } from './script/runtime.ts';
import type { Runtime, RuntimeRegistry } from './types.ts';

/** The runtimes a kernel knows, by name. */
export function builtinRuntimes(extra: Runtime[] = []): RuntimeRegistry {
  const all = [new ScriptRuntime(), new CommandRuntime(), ...extra];
  return new Map(all.map((r) => [r.name, r]));
}
