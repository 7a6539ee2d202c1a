import { AcpRuntime } from './acp/index.ts';
import { ClaudeCodeRuntime } from './claude-code/index.ts';
import { CodexRuntime } from './codex/index.ts';
import { CommandRuntime } from './command/index.ts';
import { ScriptRuntime } from './script/runtime.ts';
import type { Runtime, RuntimeRegistry } from './types.ts';

/** The runtimes a kernel knows, by name. */
export function builtinRuntimes(extra: Runtime[] = []): RuntimeRegistry {
  const all = [
    new ScriptRuntime(),
    new CommandRuntime(),
    new ClaudeCodeRuntime(),
    new CodexRuntime(),
    new AcpRuntime(),
    ...extra,
  ];
  // A runtime passed in replaces a built-in of the same name.
  return new Map(all.map((r) => [r.name, r]));
}
