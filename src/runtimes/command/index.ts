import { basename } from 'node:path';
import { confineOptions } from '../containment.ts';
import { agentEnv } from '../env.ts';
import { requireExecutable, spawnGroup } from '../process.ts';
import { trackGroup } from '../tracked.ts';
import type { AgentContext, AgentHandle, AgentSpec, Runtime } from '../types.ts';
import { CommandAgent } from './agent.ts';
import { readCommand } from './config.ts';

/**
 * Any executable as an agent. It gets the kernel's URL and its session token in its
 * environment (and nothing of the server's but the allowlist of `env.ts`), receives input
 * on stdin as JSON lines, and its stdout lines are its output. A stdout line
 * `{"warren":"idle"}` / `{"warren":"busy"}` reports turns; `{"warren":"usage",...}` reports
 * usage. Exit 0 completes the session; anything else crashes it.
 */
export class CommandRuntime implements Runtime {
  readonly name = 'command';
  readonly confines = true;

  validate(spec: AgentSpec): void {
    const [cmd] = readCommand(spec).argv;
    requireExecutable(cmd, this.name);
  }

  async start(ctx: AgentContext): Promise<AgentHandle> {
    const { argv, turns } = readCommand(ctx.spec);
    const [cmd, ...args] = argv;
    const exe = requireExecutable(cmd, this.name);
    const confine = confineOptions(ctx, ctx.spec.cwd ?? process.cwd());
    const child = spawnGroup(exe, args, {
      ...(ctx.spec.cwd ? { cwd: ctx.spec.cwd } : {}),
      ...(confine ? { confine } : {}),
      env: agentEnv(ctx, {
        warren: {
          ...(ctx.spec.prompt ? { WARREN_PROMPT: ctx.spec.prompt } : {}),
          ...(ctx.spec.systemPrompt ? { WARREN_SYSTEM_PROMPT: ctx.spec.systemPrompt } : {}),
          // Every resume, saved state or not: the program decides what resuming means to it.
          ...(ctx.resuming ? { WARREN_RESUME: '1' } : {}),
        },
      }),
      run: ctx.run,
      ...(ctx.deadline ? { deadline: ctx.deadline } : {}),
    });
    trackGroup(child, ctx.sink);
    return new CommandAgent(ctx, child, basename(cmd), turns);
  }
}
