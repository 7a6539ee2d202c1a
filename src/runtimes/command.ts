import type { ChildProcess } from 'node:child_process';
import { commandLine, killGroup, onLines, requireExecutable, spawnGroup, Tail } from './process.ts';
import type { AgentContext, AgentHandle, AgentInput, AgentSpec, Runtime } from './types.ts';

/**
 * Any executable as an agent. It gets the kernel's URL and its session token in its
 * environment, receives input on stdin as JSON lines, and its stdout lines are its output.
 * A stdout line `{"warren":"idle"}` / `{"warren":"busy"}` reports turns;
 * `{"warren":"usage",...}` reports usage. Exit 0 completes the session; anything else crashes it.
 */
export class CommandRuntime implements Runtime {
  readonly name = 'command';

  validate(spec: AgentSpec): void {
    const [cmd] = commandLine(spec, this.name);
    requireExecutable(cmd, this.name);
  }

  async start(ctx: AgentContext): Promise<AgentHandle> {
    const [cmd, ...args] = commandLine(ctx.spec, this.name);
    const exe = requireExecutable(cmd, this.name);
    const child = spawnGroup(exe, args, {
      ...(ctx.spec.cwd ? { cwd: ctx.spec.cwd } : {}),
      env: {
        ...process.env,
        ...ctx.spec.env,
        WARREN_SESSION_ID: ctx.sessionId,
        WARREN_TOKEN: ctx.token,
        ...(ctx.url ? { WARREN_URL: ctx.url, WARREN_MCP_URL: `${ctx.url}/mcp` } : {}),
        ...(ctx.spec.prompt ? { WARREN_PROMPT: ctx.spec.prompt } : {}),
        ...(ctx.resumeState ? { WARREN_RESUME: '1' } : {}),
      },
    });
    return new CommandAgent(ctx, child);
  }
}

class CommandAgent implements AgentHandle {
  private alive = true;
  private stopping = false;
  private stderr = new Tail();

  constructor(
    private readonly ctx: AgentContext,
    private readonly child: ChildProcess,
  ) {
    const { sink } = ctx;
    onLines(child.stdout!, (line) => this.onStdout(line));
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (c: string) => this.stderr.push(c));
    child.stdin!.on('error', () => {}); // EPIPE after exit is reported by 'exit'
    child.on('error', (error) => {
      this.alive = false;
      sink.exit({ reason: 'crashed', error: error.message, stderrTail: this.stderr.toString() });
    });
    child.on('exit', (code, signal) => {
      this.alive = false;
      if (this.stopping) return;
      if (code === 0) sink.exit({ reason: 'completed', code });
      else
        sink.exit({
          reason: 'crashed',
          code,
          error: signal ? `killed by ${signal}` : `exited with code ${code}`,
          stderrTail: this.stderr.toString(),
        });
    });
  }

  get ready(): boolean {
    return this.alive && !this.stopping;
  }

  /** A command has no turns unless it reports them; what reaches its stdin counts as delivered. */
  readonly acksOnDeliver = true;

  deliver(input: AgentInput): void {
    this.child.stdin!.write(
      `${JSON.stringify({ type: 'input', messages: input.messages, text: input.text })}\n`,
    );
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await killGroup(this.child);
  }

  private onStdout(line: string): void {
    const { sink } = this.ctx;
    if (line.startsWith('{"warren"')) {
      try {
        const ctl = JSON.parse(line) as { warren: string; [k: string]: unknown };
        if (ctl.warren === 'idle') return void sink.idle();
        if (ctl.warren === 'busy') return void sink.busy();
        if (ctl.warren === 'usage') {
          const { warren: _w, ...usage } = ctl;
          return void sink.usage(usage);
        }
      } catch {}
    }
    if (line.length > 0) void sink.output(line);
  }
}
