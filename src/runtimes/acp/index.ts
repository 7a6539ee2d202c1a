import { basename, resolve as resolvePath } from 'node:path';
import { readCommand } from '../command/config.ts';
import { confineOptions } from '../containment.ts';
import { agentEnv } from '../env.ts';
import { requireExecutable, spawnGroup } from '../process.ts';
import { trackGroup } from '../tracked.ts';
import type { AgentContext, AgentHandle, AgentSpec, Runtime } from '../types.ts';
import { readConfig } from './config.ts';

/**
 * Any Agent Client Protocol agent over stdio; warren is the ACP client.
 *
 * The agent runs in its own process group with stdin/stdout as the ndjson ACP stream. Start
 * is `initialize` → `session/new` (or `session/load` / `session/resume` when resuming), with
 * warren's MCP endpoint among the session's MCP servers. The spawn prompt is the first
 * `session/prompt`; each delivered input is the next one. See `agent.ts` and
 * docs/runtimes-acp.md.
 */
export class AcpRuntime implements Runtime {
  readonly name = 'acp';
  readonly confines = true;

  validate(spec: AgentSpec): void {
    const [cmd] = readCommand(spec, this.name).argv;
    readConfig(spec);
    requireExecutable(cmd, this.name);
  }

  async start(ctx: AgentContext): Promise<AgentHandle> {
    const [cmd, ...args] = readCommand(ctx.spec, this.name).argv;
    const config = readConfig(ctx.spec);
    const exe = requireExecutable(cmd, this.name);
    // The ACP SDK loads with the first ACP agent, not with every server.
    const { AcpAgent } = await import('./agent.ts');
    const cwd = resolvePath(ctx.spec.cwd ?? process.cwd());
    const confine = confineOptions(ctx, cwd);
    const child = spawnGroup(exe, args, {
      cwd,
      env: agentEnv(ctx),
      run: ctx.run,
      ...(ctx.deadline ? { deadline: ctx.deadline } : {}),
      ...(confine ? { confine } : {}),
    });
    trackGroup(child, ctx.sink);
    const agent = new AcpAgent(ctx, config, child, cwd, basename(cmd));
    await agent.open();
    return agent;
  }
}
