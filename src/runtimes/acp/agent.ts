import type { ChildProcess } from 'node:child_process';
import { type AnyMessage, type ClientConnection, PROTOCOL_VERSION } from '@agentclientprotocol/sdk';
import { exitedText } from '../errors.ts';
import { killGroup, Tail } from '../process.ts';
import type { AgentContext, AgentExit, AgentHandle, AgentInput } from '../types.ts';
import { connectClient } from './client.ts';
import type { AcpConfig } from './config.ts';
import { ConfinedFiles } from './files.ts';
import { applyOptions, mcpServersFor, openSession, type SessionIo } from './session.ts';
import { bounded, delay, describe, fire, reportUsage } from './stream.ts';
import { UpdateLog } from './updates.ts';

/** After `session/cancel`, how long the turn may take to wind down before the group is killed. */
const CANCEL_GRACE_MS = 500;
/** After the agent exits, how long to wait for the rest of its stdout (its last updates). */
const DRAIN_MS = 300;

type TurnState = 'starting' | 'idle' | 'turn' | 'ended';

/**
 * A running ACP agent; warren is its client. `session/update` notifications become log
 * events (`updates.ts`); the prompt's response ends the turn (`idle`). Permission requests are
 * answered by policy (`config.permission`, default deny) and logged. File reads and writes are
 * served inside the session's working directory only; there is no terminal.
 */
export class AcpAgent implements AgentHandle {
  readonly acksOnDeliver = false;
  private state: TurnState = 'starting';
  private stopping = false;
  private stopped: Promise<void> | null = null;
  private ended = false;
  private readonly stderr = new Tail();
  private readonly conn: ClientConnection;
  private readonly files: ConfinedFiles;
  private acpSessionId: string | null = null;
  /** Input that arrived mid-turn (the kernel does not do this; kept for safety): the next turn. */
  private queued: AgentInput[] = [];
  private turn: Promise<void> = Promise.resolve();
  private readonly updates: UpdateLog;
  private exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  private readonly exited: Promise<void>;
  private readonly stdoutEnded: Promise<void>;

  constructor(
    private readonly ctx: AgentContext,
    private readonly config: AcpConfig,
    private readonly child: ChildProcess,
    private readonly cwd: string,
    /** The agent's program name, for crash texts ("claude-agent-acp exited with code 1"). */
    private readonly label: string,
  ) {
    this.files = new ConfinedFiles(cwd);
    const saved = ctx.resumeState?.costUsd;
    this.updates = new UpdateLog(ctx.sink, typeof saved === 'number' ? saved : 0, () =>
      fire(ctx.sink.saveState(this.stateToSave())),
    );
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (c: string) => this.stderr.push(c));
    child.stdin!.on('error', () => {}); // EPIPE after exit is reported by 'exit'
    this.stdoutEnded = new Promise((r) => {
      child.stdout!.once('end', r);
      child.stdout!.once('close', r);
    });
    this.exited = new Promise((r) => {
      child.once('exit', (code, signal) => {
        this.exit = { code, signal };
        r();
        void this.onExit();
      });
      child.once('error', (error) => {
        this.stderr.push(`\n${error.message}\n`);
        this.exit ??= { code: null, signal: null };
        r();
        this.conn?.close(error);
        void this.onExit(error.message);
      });
    });

    this.conn = connectClient(child, {
      sink: ctx.sink,
      files: this.files,
      updates: this.updates,
      policy: config.permission,
      stopping: () => this.stopping,
      observe: (m: AnyMessage) => this.observe(m),
    });
  }

  get ready(): boolean {
    return this.state === 'idle' && !this.stopping && !this.ended;
  }

  // ------------------------------------------------------------------ start

  /** initialize, then a session (new, or restored); then the first turn, or idle. */
  async open(): Promise<void> {
    const { ctx } = this;
    try {
      const init = await this.startStep(
        'initialize',
        this.conn.agent.request('initialize', {
          protocolVersion: PROTOCOL_VERSION,
          clientCapabilities: { fs: { readTextFile: true, writeTextFile: true }, terminal: false },
          clientInfo: { name: 'warren', version: '0.1.0' },
        }),
      );
      if (init.protocolVersion !== PROTOCOL_VERSION) {
        throw new Error(
          `the agent speaks ACP protocol version ${init.protocolVersion}; warren speaks ${PROTOCOL_VERSION}`,
        );
      }
      const mcp = mcpServersFor(ctx, this.config, init);
      const restored = await openSession(this.sessionIo(), init, mcp.servers);
      await ctx.sink.saveState(this.stateToSave());
      fire(
        ctx.sink.event('acp_session', {
          acpSessionId: this.acpSessionId,
          how: restored.how,
          resumed: ctx.resumeState !== null,
          historyRestored: restored.how !== 'new',
          ...(restored.note ? { note: restored.note } : {}),
          ...(restored.how === 'load' ? { replayed: this.updates.replayed } : {}),
          agent: init.agentInfo ? { name: init.agentInfo.name, version: init.agentInfo.version } : null,
          protocolVersion: init.protocolVersion,
          mcp: mcp.mode,
          ...(mcp.note ? { mcpNote: mcp.note } : {}),
        }),
      );
      await applyOptions(this.sessionIo(), restored.configOptions, restored.modes);
    } catch (error) {
      await this.failStart(error as Error);
      throw error;
    }
    // A resumed session does not replay its spawn prompt: the agent has (or lost) that turn.
    // ACP has no system prompt: a persona's opens the first turn, ahead of the task.
    const prompt = ctx.resumeState ? null : withSystemPrompt(ctx.spec.prompt, ctx.spec.systemPrompt);
    if (prompt) this.startTurn(prompt, null);
    else {
      this.state = 'idle';
      fire(ctx.sink.idle());
    }
  }

  private startStep<T>(what: string, p: Promise<T>): Promise<T> {
    return bounded(what, p, this.config.startTimeoutMs);
  }

  private async failStart(error: Error): Promise<void> {
    if (this.ended) return;
    this.stopping = true;
    // Its stderr says why; give it a moment to arrive, then dispose of the group.
    await Promise.race([this.exited, delay(100)]);
    await killGroup(this.child);
    await Promise.race([this.stdoutEnded, delay(DRAIN_MS)]);
    this.conn.close();
    this.end({
      reason: 'crashed',
      error: `could not start: ${error.message}${this.exitNote()}`,
      ...(this.exit ? { code: this.exit.code } : {}),
      stderrTail: this.stderr.toString(),
    });
  }

  /** What opening the ACP session needs of this agent. */
  private sessionIo(): SessionIo {
    return {
      ctx: this.ctx,
      config: this.config,
      conn: this.conn,
      cwd: this.cwd,
      sessionId: () => this.acpSessionId,
      target: (id, replaying) => {
        this.acpSessionId = id;
        this.updates.replaying = replaying;
      },
      step: (what, p) => this.startStep(what, p),
      exited: () => this.exit !== null,
    };
  }

  private stateToSave(): Record<string, unknown> {
    return {
      acpSessionId: this.acpSessionId,
      ...(this.updates.costUsd ? { costUsd: this.updates.costUsd } : {}),
    };
  }

  // ------------------------------------------------------------------ turns

  deliver(input: AgentInput): void {
    if (this.ended || this.stopping) return;
    if (this.state !== 'idle') {
      this.queued.push(input);
      return;
    }
    this.startTurn(input.text, [input]);
  }

  private startTurn(text: string, inputs: AgentInput[] | null): void {
    const { sink } = this.ctx;
    this.state = 'turn';
    fire(sink.busy());
    if (inputs) {
      fire(sink.event('input', { text, seqs: inputs.flatMap((i) => i.messages.map((m) => m.seq)) }));
    }
    this.turn = this.runTurn(text);
  }

  private async runTurn(text: string): Promise<void> {
    const { sink } = this.ctx;
    let stopReason: string;
    let usage: unknown;
    try {
      const res = await this.conn.agent.request('session/prompt', {
        sessionId: this.acpSessionId!,
        prompt: [{ type: 'text', text }],
      });
      stopReason = res.stopReason;
      usage = (res as { usage?: unknown }).usage;
    } catch (error) {
      this.updates.flushText();
      if (this.stopping || this.ended) return;
      if (this.conn.signal.aborted || this.exit) return this.connectionLost();
      return this.crash(`session/prompt failed: ${describe(error)}`);
    }
    this.updates.flushText();
    reportUsage(usage, sink);
    if (stopReason !== 'end_turn') fire(sink.event('turn_end', { stopReason }));
    if (this.stopping || this.ended) return;
    if (this.queued.length > 0) {
      const next = this.queued.splice(0);
      this.startTurn(next.map((i) => i.text).join('\n'), next);
      return;
    }
    this.state = 'idle';
    fire(sink.idle());
  }

  // ------------------------------------------------------------------ updates

  /** Every message from the agent, in order, before the SDK dispatches it. */
  private observe(m: AnyMessage): void {
    if (!this.ended) this.updates.observe(m, this.acpSessionId);
  }

  // ------------------------------------------------------------------ ends

  /**
   * End the agent at the kernel's request (idle, SIGTERM pending): ACP has no "end session"
   * call, so close the connection, stop the process group and report `completed`.
   */
  finish(): void {
    if (this.ended || this.stopping) return;
    this.stopped ??= this.doStop().then(() => this.end({ reason: 'completed' }));
  }

  async stop(): Promise<void> {
    this.stopped ??= this.doStop();
    return this.stopped;
  }

  private async doStop(): Promise<void> {
    this.stopping = true;
    if (this.state === 'turn' && this.acpSessionId && !this.exit) {
      await this.conn.agent.notify('session/cancel', { sessionId: this.acpSessionId }).catch(() => {});
      await Promise.race([this.turn, this.exited, delay(CANCEL_GRACE_MS)]);
    }
    this.updates.flushText();
    await killGroup(this.child);
    this.killStragglers();
    this.conn.close();
    this.state = 'ended';
  }

  private async onExit(error?: string): Promise<void> {
    if (this.stopping || this.ended) return;
    // Its last updates may still be in the pipe.
    await Promise.race([this.stdoutEnded, delay(DRAIN_MS)]);
    if (this.stopping || this.ended) return;
    if (this.state === 'starting') {
      // open() reports it, once its pending request fails.
      this.conn.close(new Error('the agent exited'));
      return;
    }
    this.updates.flushText();
    const { code, signal } = this.exit ?? { code: null, signal: null };
    const midTurn = this.state === 'turn';
    this.conn.close();
    this.killStragglers();
    if (code === 0 && !midTurn && !error) {
      this.end({ reason: 'completed', code });
      return;
    }
    this.end({
      reason: 'crashed',
      code,
      ...(error ? {} : { signal }),
      error:
        error ??
        (code === 0 && signal === null
          ? `${this.label} exited in the middle of a turn`
          : exitedText(this.label, code, signal)),
      stderrTail: this.stderr.toString(),
    });
  }

  /** The ACP stream closed under a turn: the exit report says why, or it is a crash of its own. */
  private async connectionLost(): Promise<void> {
    await Promise.race([this.exited, delay(1000)]);
    if (this.exit || this.stopping || this.ended) return; // onExit reports it
    return this.crash('the agent closed its ACP stream');
  }

  /** A protocol failure: end the session as crashed, with the stderr tail, and dispose of the group. */
  private async crash(error: string): Promise<void> {
    if (this.ended || this.stopping) return;
    this.stopping = true;
    this.state = 'ended';
    await killGroup(this.child);
    this.killStragglers();
    await Promise.race([this.stdoutEnded, delay(DRAIN_MS)]);
    this.conn.close();
    this.end({
      reason: 'crashed',
      error,
      ...(this.exit ? { code: this.exit.code } : {}),
      stderrTail: this.stderr.toString(),
    });
  }

  private end(result: AgentExit): void {
    if (this.ended) return;
    this.ended = true;
    this.state = 'ended';
    this.ctx.sink.exit(result);
  }

  /** Anything the agent started that outlived it: the group goes with its session. */
  private killStragglers(): void {
    if (this.child.pid === undefined) return;
    try {
      process.kill(-this.child.pid, 'SIGKILL');
    } catch {}
  }

  private exitNote(): string {
    if (!this.exit) return '';
    return ` (${exitedText(this.label, this.exit.code, this.exit.signal)})`;
  }
}

/** The spawn prompt with the persona's system prompt ahead of it (either may be absent). */
function withSystemPrompt(prompt: string | null, system: string | undefined): string | null {
  if (!system) return prompt;
  return prompt ? `${system}\n\n${prompt}` : system;
}
