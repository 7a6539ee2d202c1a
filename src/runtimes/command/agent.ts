import type { ChildProcess } from 'node:child_process';
import { exitedText } from '../errors.ts';
import { killGroup, onLines, Tail } from '../process.ts';
import type { AgentContext, AgentHandle, AgentInput } from '../types.ts';

/** A running `command` agent: stdin takes input batches, stdout lines are output or control lines. */
export class CommandAgent implements AgentHandle {
  private alive = true;
  private stopping = false;
  /** It has reported a turn (`{"warren":"idle"}` or `busy`): its input is acknowledged per turn. */
  private turns = false;
  /** Handed input whose turn has not ended (only counted once it reports turns). */
  private inTurn = false;
  private stderr = new Tail();

  constructor(
    private readonly ctx: AgentContext,
    private readonly child: ChildProcess,
    /** The program's name, for crash texts ("python3 exited with code 1"). */
    private readonly label: string,
  ) {
    const { sink } = ctx;
    onLines(child.stdout!, (line) => this.onStdout(line));
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (c: string) => this.stderr.push(c));
    child.stdin!.on('error', () => {}); // EPIPE after exit is reported by 'exit'
    child.on('error', (error) => {
      this.alive = false;
      sink.exit({
        reason: 'crashed',
        error: `could not run ${this.label}: ${error.message}`,
        stderrTail: this.stderr.toString(),
      });
    });
    child.on('exit', (code, signal) => {
      this.alive = false;
      if (this.stopping) return;
      if (code === 0) sink.exit({ reason: 'completed', code });
      else
        sink.exit({
          reason: 'crashed',
          code,
          signal,
          error: exitedText(this.label, code, signal),
          stderrTail: this.stderr.toString(),
        });
    });
  }

  get ready(): boolean {
    return this.alive && !this.stopping && !this.inTurn;
  }

  /**
   * A command has no turns unless it reports them: until then, what reaches its stdin counts
   * as delivered. One that reports them is handed one batch per turn and its input counts as
   * taken at the idle that ends the turn, so a batch whose turn never ended (the agent ended
   * by a fence, a paused node's watcher) is handed again to the session's next agent.
   */
  get acksOnDeliver(): boolean {
    return !this.turns;
  }

  deliver(input: AgentInput): void {
    if (this.turns) this.inTurn = true;
    this.child.stdin!.write(
      `${JSON.stringify({ type: 'input', messages: input.messages, text: input.text })}\n`,
    );
  }

  /** End of input: a well-behaved command exits 0 on EOF, and its exit reports `completed`. */
  finish(): void {
    if (this.alive && !this.stopping) this.child.stdin!.end();
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
        if (ctl.warren === 'idle') {
          this.turns = true;
          this.inTurn = false;
          return void sink.idle();
        }
        if (ctl.warren === 'busy') {
          this.turns = true;
          return void sink.busy();
        }
        if (ctl.warren === 'activity') {
          // A short status beside busy/idle; anything but a string clears it. Capped: it is shown in ps.
          return void sink.activity(typeof ctl.text === 'string' && ctl.text ? ctl.text.slice(0, 200) : null);
        }
        if (ctl.warren === 'usage') {
          const { warren: _w, ...usage } = ctl;
          return void sink.usage(usage);
        }
      } catch {}
    }
    if (line.length > 0) void sink.output(line);
  }
}
