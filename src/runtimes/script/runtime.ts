import { SliceGate } from '../../util/slice-gate.ts';
import { WarrenError } from '../../vocab/errors.ts';
import { isDatabaseUnreachable } from '../../vocab/unreachable.ts';
import type { AgentContext, AgentHandle, AgentInput, Runtime } from '../types.ts';
import { loadScript, type Script, type Step } from './format.ts';
import { type ScriptLimits, scriptLimits } from './limits.ts';
import { MatchPool } from './match.ts';
import { interpolate } from './vars.ts';

/**
 * A built-in deterministic agent: it plays a script of syscalls as its session. Needs no
 * API key; the demo and the tests run on it. Its position is saved after every step, so a
 * resumed script continues where it stood (a step cut off by a crash runs again). Scripts run
 * in the server, so they share it: steps take turns on the event loop (util/slice-gate.ts) and
 * `wait.match` patterns run in a worker thread (match.ts), both held here, one per runtime.
 */
export class ScriptRuntime implements Runtime {
  readonly name = 'script';
  readonly inProcess = true;
  private readonly limits: ScriptLimits;
  private readonly matcher: MatchPool;
  private readonly gate: SliceGate;
  /** The last few inline scripts parsed, by their text: a spawn's check and its start parse once. */
  private readonly parsed = new Map<string, Script>();

  /** `roots`: where `config.file` may point (default: the server's working directory); caps in limits.ts. */
  constructor(limits: Partial<ScriptLimits> = {}) {
    this.limits = scriptLimits(limits);
    this.matcher = new MatchPool(this.limits.matchTimeoutMs, this.limits.maxMatchInput);
    this.gate = new SliceGate(this.limits.stepSliceMs);
  }

  private load(config: Record<string, unknown>): Script {
    const script = loadScript(config, this.limits, this.parsed);
    // At most 16 kept (each at most maxScriptBytes of text).
    for (const key of this.parsed.keys()) {
      if (this.parsed.size <= 16) break;
      this.parsed.delete(key);
    }
    return script;
  }

  /** The kernel is shutting down (its agents stopped): end the match worker. */
  close(): Promise<void> {
    return this.matcher.close();
  }

  validate(spec: AgentContext['spec']): void {
    this.load(spec.config);
  }

  async start(ctx: AgentContext): Promise<AgentHandle> {
    const script = this.load(ctx.spec.config);
    // A script that will wait on a pattern: the worker boots now, while the agent starts, not
    // on the loop's busiest moment, the first input that must be matched.
    if (script.steps.some((s) => 'wait' in s && s.wait?.match)) this.matcher.warm();
    const agent = new ScriptAgent(ctx, script, this.matcher, this.gate);
    // `run` answers its own failures; nothing it meets may become an unhandled rejection,
    // which ends the process that hosts it (a server, a runner).
    agent.run().catch(() => {});
    return agent;
  }
}

class ScriptAgent implements AgentHandle {
  private pc: number;
  private vars: Record<string, unknown>;
  private stopped = false;
  /** Aborted at stop: a `wait.match` still queued for the match worker is dropped. */
  private readonly gone = new AbortController();
  private inbox: ((input: AgentInput) => void) | undefined;
  private wake: (() => void) | undefined;

  constructor(
    private readonly ctx: AgentContext,
    private readonly script: Script,
    private readonly matcher: MatchPool,
    private readonly gate: SliceGate,
  ) {
    const saved = ctx.resumeState as { pc?: number; vars?: Record<string, unknown> } | null;
    this.pc = saved?.pc ?? 0;
    this.vars = {
      ...(saved?.vars ?? {}),
      self: {
        id: ctx.sessionId,
        prompt: ctx.spec.prompt,
        systemPrompt: ctx.spec.systemPrompt ?? null,
      },
    };
  }

  get ready(): boolean {
    return this.inbox !== undefined;
  }

  deliver(input: AgentInput): void {
    const take = this.inbox;
    this.inbox = undefined;
    take?.(input);
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.gone.abort();
    this.wake?.();
  }

  async run(): Promise<void> {
    const { sink } = this.ctx;
    try {
      while (!this.stopped && this.pc < this.script.steps.length) {
        await this.gate.turn();
        if (this.stopped) return;
        const step = this.script.steps[this.pc]!;
        const done = await this.exec(step);
        if (this.stopped) return;
        this.pc += 1;
        await sink.saveState({ pc: this.pc, vars: this.persistable() });
        if (done) return;
      }
      if (!this.stopped) sink.exit({ reason: 'completed' });
    } catch (error) {
      if (this.stopped) return;
      // This report can be refused as the step was (the session was moved off this runner,
      // its node fenced): the agent still ends, and says why on its exit.
      await sink.output(`script failed at step ${this.pc + 1}: ${(error as Error).message}`).catch(() => {});
      sink.exit({ reason: 'crashed', error: (error as Error).message });
    }
  }

  /** Returns true when the step ends the script. */
  private async exec(step: Step): Promise<boolean> {
    const { sink, call } = this.ctx;
    const v = <T>(x: T): T => interpolate(x, this.vars);
    if ('say' in step) await sink.output(v(step.say));
    else if ('reply' in step) await call('ipc_write', { fd: 1, message: v(step.reply) });
    else if ('spawn' in step) {
      const { as, script, ...rest } = v(step.spawn);
      const res = await call('ipc_spawn', { ...rest, ...(script !== undefined ? { script } : {}) });
      if (as) this.vars[as] = res;
    } else if ('write' in step)
      await call('ipc_write', { fd: this.fd(step.write.fd), message: v(step.write.message) });
    else if ('read' in step) {
      const res = await this.readUntilMessage(this.fd(step.read.fd), step.read.timeoutMs);
      if (step.read.as) this.vars[step.read.as] = res;
    } else if ('wait' in step) {
      let input: AgentInput | undefined;
      do input = await this.waitForInput();
      while (
        // Matched on the input as rendered, envelope and all: a script may wait for a sender or a stream.
        input &&
        step.wait.match &&
        !(await this.matches(step.wait.match, input.text))
      );
      if (!input) return true;
      if (step.wait.as) this.vars[step.wait.as] = scriptInput(input);
    } else if ('close' in step)
      await call('ipc_close', { fd: this.fd(step.close.fd), force: step.close.force ?? false });
    else if ('create_stream' in step) {
      const res = await call('ipc_create_stream', {
        name: v(step.create_stream.name),
        selfEcho: step.create_stream.selfEcho ?? false,
      });
      if (step.create_stream.as) this.vars[step.create_stream.as] = res;
    } else if ('attach' in step) {
      const a = step.attach;
      const res = await call('ipc_attach', {
        fd: this.fd(a.fd),
        targetSessionId: v(a.target),
        permission: a.permission,
        deliveryMode: a.deliveryMode,
      });
      if (a.as) this.vars[a.as] = res;
    } else if ('share' in step) {
      const s = step.share;
      await call('ipc_share_stream', {
        ...(s.fd !== undefined ? { fd: this.fd(s.fd) } : {}),
        ...(s.streamName ? { streamName: v(s.streamName) } : {}),
        ...(s.permission ? { permission: s.permission } : {}),
        ...(s.deliveryMode ? { deliveryMode: s.deliveryMode } : {}),
      });
    } else if ('sleep' in step) await this.sleep(step.sleep);
    else if ('usage' in step) await sink.usage(step.usage);
    else if ('listen' in step) {
      let said: Promise<void> | undefined;
      for (;;) {
        // The answer's output and the idle that ends its turn are reported in the same tick:
        // one write, in order. The next input waits until the answer is recorded; one refused
        // for good fails the script.
        const next = this.waitForInput();
        if (said) await said;
        const input = await next;
        if (!input) return true;
        said = step.listen.say
          ? this.answer(interpolate(step.listen.say, { ...this.vars, input: scriptInput(input) }))
          : undefined;
        // Awaited (and its failure thrown) before the next input; until then a refusal must
        // not count as unhandled.
        said?.catch(() => {});
      }
    } else if ('call' in step) {
      const res = await call(step.call.syscall, v(step.call.input));
      if (step.call.as) this.vars[step.call.as] = res;
    } else if ('exit' in step) {
      sink.exit({ reason: step.exit });
      return true;
    }
    return false;
  }

  /**
   * A listener's answer, written until it is recorded. One refused for a moment (the database
   * unreachable) leaves its turn's input unacknowledged, but this agent is not handed that
   * input again, and its next turn acknowledges it: the answer is the only record that it was
   * heard, so it is tried again rather than given up, or the script failed for it (a crashed
   * session answers nothing more). Given up once the agent is stopped (its node fenced: the
   * session's next agent is handed the input again); a refusal for good (the session no longer
   * runs here, on a runner) rejects, and the script fails as before.
   */
  private async answer(text: string): Promise<void> {
    for (let wait = ANSWER_RETRY_MS; ; wait = Math.min(wait * 2, ANSWER_RETRY_MAX_MS)) {
      try {
        return await this.ctx.sink.output(text);
      } catch (error) {
        if (this.stopped) return;
        if (!momentary(error)) throw error;
        // Not `this.sleep`: its wake is the input wait's, which the listen loop has set by now.
        await new Promise<void>((resolve) => this.ctx.clock.setTimeout(resolve, wait));
        if (this.stopped) return;
      }
    }
  }

  /** A pattern that runs out of time counts as no match; the log says so. */
  private async matches(pattern: string, text: string): Promise<boolean> {
    const res = await this.matcher.test(pattern, text, this.gone.signal);
    if (this.stopped) return false;
    if (res === 'timeout') await this.ctx.sink.event('match_timeout', { pattern, inputLength: text.length });
    return res === true;
  }

  private fd(ref: number | string): number {
    const n = Number(interpolate(ref, this.vars));
    if (!Number.isInteger(n) || n < 0) throw new Error(`not an fd: ${JSON.stringify(ref)}`);
    return n;
  }

  /** A blocking read is a series of bounded waits; the agent stays busy (inside a syscall). */
  private async readUntilMessage(fd: number, timeoutMs?: number): Promise<unknown> {
    const until = timeoutMs ? this.ctx.clock.now() + timeoutMs : Number.POSITIVE_INFINITY;
    for (;;) {
      const res = (await this.ctx.call('ipc_read', { fd, wait: true })) as {
        messages: Array<{ text: string }>;
      };
      if (res.messages.length > 0 || this.stopped || this.ctx.clock.now() >= until) return res;
    }
  }

  /** End of turn: go idle and take the next pushed input. */
  private waitForInput(): Promise<AgentInput | undefined> {
    return new Promise((resolve) => {
      this.wake = () => resolve(undefined);
      this.inbox = (input) => {
        this.wake = undefined;
        const { sink } = this.ctx;
        void sink.busy();
        // The input is taken whether or not its event was recorded: a refused report (the
        // session no longer runs here) fails the script at its next step, not as an
        // unhandled rejection here.
        const take = () => resolve(input);
        void sink
          .event('input', { text: input.text, seqs: input.messages.map((m) => m.seq) })
          .then(take, take);
      };
      void this.ctx.sink.idle();
    });
  }

  private sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const t = this.ctx.clock.setTimeout(
        () => {
          this.wake = undefined;
          resolve();
        },
        ms,
        { keepAlive: true },
      );
      this.wake = () => {
        this.ctx.clock.clearTimeout(t);
        resolve();
      };
    });
  }

  private persistable(): Record<string, unknown> {
    const { self: _self, ...rest } = this.vars;
    return JSON.parse(JSON.stringify(rest));
  }
}

/** A refusal that may pass: the database unreachable, or the server saying so (503). */
const momentary = (error: unknown): boolean =>
  isDatabaseUnreachable(error) || (error instanceof WarrenError && error.code === 'unavailable');

/** A refused answer is written again after this, doubling up to the max (ms). */
const ANSWER_RETRY_MS = 100;
const ANSWER_RETRY_MAX_MS = 2000;

/** What was sent: the messages' own text, one per line, without the delivery envelope. */
const sent = (input: AgentInput): string => input.messages.map((m) => m.text).join('\n');

/**
 * An input as a script sees it: `${input.text}` is what was sent, `${input.rendered}` the
 * batch as a text agent is handed it (`[message fd=… seq=…] …` lines), `${input.messages}`
 * each message with its fd, stream, sender and seq.
 */
const scriptInput = (input: AgentInput) => ({ ...input, text: sent(input), rendered: input.text });
