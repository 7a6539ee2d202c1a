import type { ChildProcess } from 'node:child_process';
import type { TimerHandle } from '../../util/clock.ts';
import { exitedText } from '../errors.ts';
import { killGroup, onLines, Tail } from '../process.ts';
import type { AgentContext, AgentHandle, AgentInput } from '../types.ts';

/**
 * How long a new command may go without reporting a turn before it is handed input. One that
 * reports turns says `{"warren":"idle"}` when it starts (after a banner, perhaps); input handed
 * before that line was read would be taken for the startup's turn (its idle would acknowledge
 * it), and every later idle would acknowledge the batch after the one the agent had finished.
 * One that never reports turns waits this long for its first input, once.
 */
export const QUIET_START_MS = 1000;
/**
 * How long an idle command that still owes idles (see `owed`) is waited for before it is handed
 * input anyway: one that broke the protocol (no startup idle) would otherwise wait for ever.
 */
export const OWED_IDLE_MS = 5000;

/** A running `command` agent: stdin takes input batches, stdout lines are output or control lines. */
export class CommandAgent implements AgentHandle {
  private alive = true;
  private stopping = false;
  /** It has reported a turn (`{"warren":"idle"}` or `busy`): its input is acknowledged per turn. */
  private turns = false;
  /** Handed input (or said busy) and the turn has not ended (only counted once it reports turns). */
  private inTurn = false;
  /** It has shown whether it reports turns: its first idle or busy, or QUIET_START_MS without one. */
  private started = false;
  private readonly quiet: TimerHandle | undefined;
  /** Batches handed before it first reported a turn (a slow start: its quiet start ran out). */
  private handedUnturned = 0;
  /**
   * Idles it still owes for those batches, each the end of the turn that takes one: until they
   * have come it is handed nothing, or an idle of an earlier batch would end the new one's turn
   * (and acknowledge it) for the rest of its life. Its first idle is its startup's, not one of them.
   */
  private owed = 0;
  private saidIdle = false;
  /** Waiting for an owed idle that may never come (it broke the protocol): given up on after OWED_IDLE_MS. */
  private owedWait: TimerHandle | undefined;
  private stderr = new Tail();

  constructor(
    private readonly ctx: AgentContext,
    private readonly child: ChildProcess,
    /** The program's name, for crash texts ("python3 exited with code 1"). */
    private readonly label: string,
    /**
     * What its spawn said of its turns (`config.turns`): true, it reports them, so it waits for
     * its startup idle however long that takes; false, it never does, so it needs no quiet
     * start. Unset: its first lines (or QUIET_START_MS of none) say.
     */
    declared?: boolean,
  ) {
    const { sink } = ctx;
    if (declared === true) this.turns = true;
    if (declared === false) this.started = true;
    this.quiet =
      declared === undefined
        ? ctx.clock.setTimeout(() => {
            if (this.begin() && this.alive && !this.stopping) sink.ready();
          }, QUIET_START_MS)
        : undefined;
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
      if (this.quiet) ctx.clock.clearTimeout(this.quiet);
      if (this.owedWait) ctx.clock.clearTimeout(this.owedWait);
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
    return this.alive && !this.stopping && !this.inTurn && this.started && this.owed === 0;
  }

  /** True the first time: it has now shown whether it reports turns. */
  private begin(): boolean {
    if (this.started) return false;
    this.started = true;
    if (this.quiet) this.ctx.clock.clearTimeout(this.quiet);
    return true;
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
    else this.handedUnturned += 1;
    this.child.stdin!.write(
      `${JSON.stringify({ type: 'input', messages: input.messages, text: input.text })}\n`,
    );
  }

  /** Its first idle or busy: it reports turns, and owes an idle for each batch it was handed before. */
  private reportsTurns(): void {
    this.begin();
    if (this.turns) return;
    this.turns = true;
    this.owed = this.handedUnturned;
  }

  /**
   * Idle while it still owes idles: waits OWED_IDLE_MS for the next, then gives up (one that
   * never said a startup idle owes one fewer than counted) and says it can take input.
   */
  private awaitOwed(): void {
    if (this.owedWait) this.ctx.clock.clearTimeout(this.owedWait);
    this.owedWait = undefined;
    if (this.owed === 0 || this.inTurn) return;
    this.owedWait = this.ctx.clock.setTimeout(() => {
      this.owedWait = undefined;
      this.owed = 0;
      if (this.alive && !this.stopping) this.ctx.sink.ready();
    }, OWED_IDLE_MS);
  }

  /** End of input: a well-behaved command exits 0 on EOF, and its exit reports `completed`. */
  finish(): void {
    if (this.alive && !this.stopping) this.child.stdin!.end();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    await killGroup(this.child);
  }

  /** One stdout line to the sink: output, or a control line. */
  private onStdout(line: string): void {
    const { sink } = this.ctx;
    if (line.startsWith('{"warren"')) {
      try {
        const ctl = JSON.parse(line) as { warren: string; [k: string]: unknown };
        // Stopped, its turns are over: a turn report still in its pipe (read after the stop, a
        // next agent for the session perhaps started) would end that agent's turn, not its own.
        if (this.stopping && (ctl.warren === 'idle' || ctl.warren === 'busy')) return;
        if (ctl.warren === 'idle') {
          this.reportsTurns();
          if (this.saidIdle && this.owed > 0) this.owed -= 1;
          this.saidIdle = true;
          this.inTurn = false;
          this.awaitOwed();
          return void sink.idle();
        }
        if (ctl.warren === 'busy') {
          // A turn of its own (its prompt) or of the input it took: the next batch waits for its idle.
          this.reportsTurns();
          this.inTurn = true;
          this.awaitOwed();
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
