import type { ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { resolve } from 'node:path';
import { OVER_BUDGET } from '../../vocab/gateway.ts';
import { confineOptions } from '../containment.ts';
import { exitedText } from '../errors.ts';
import { killGroup, onLines, spawnGroup, Tail } from '../process.ts';
import { trackGroup } from '../tracked.ts';
import type { AgentContext, AgentHandle, AgentInput } from '../types.ts';
import { type CodexSettings, execArgs, type TurnPlan } from './args.ts';
import { type CodexEvent, type CodexItem, type CodexUsage, num, toolCall, toolResult } from './events.ts';
import { reapGroup } from './reap.ts';

/** What a session saves for resume. */
export interface CodexState {
  threadId: string | null;
  home: string;
  /** The spawn prompt's turn has completed. */
  promptDone: boolean;
  /** The thread's token totals so far (codex reports totals; usage events carry the difference). */
  totals: Totals;
}

interface Totals {
  input: number;
  cached: number;
  output: number;
}

export interface CodexAgentOptions {
  bin: string;
  settings: CodexSettings;
  state: CodexState;
  /** The home is this session's own (made here, removed when the session ends). */
  ownHome: boolean;
  /** Every turn's process environment. */
  env: Record<string, string>;
  /** After `turn.completed`, how long codex may take to exit before it is stopped (ms). */
  exitGraceMs: number;
  /**
   * Its model calls go through warren's gateway, which records their usage from the
   * provider's answers: a turn's own report then carries only the turn, so nothing is
   * counted twice.
   */
  metered: boolean;
}

/** The environment variable codex reads the session token from (`bearer_token_env_var`). */
export const TOKEN_ENV = 'WARREN_TOKEN';

/** How long a turn's output may go on after its process exited (a leftover holding the pipe). */
const OUTPUT_AFTER_EXIT_MS = 2000;

interface Turn {
  child: ChildProcess;
  stderr: Tail;
  /** Why the turn failed (`turn.failed`). */
  failure: string | null;
  /** The last `error` event: not fatal by itself (codex reports retries this way). */
  lastError: string | null;
  completed: boolean;
  exitTimer: NodeJS.Timeout | null;
  /** Tool-call items already reported as started. */
  started: Set<string>;
}

/** One codex session: a process per turn, nothing running between turns. */
export class CodexAgent implements AgentHandle {
  private turn: Turn | null = null;
  private queued: AgentInput[] = [];
  private stopping = false;
  private dead = false;
  /** The kernel asked it to end: report `completed` once the current turn (if any) is over. */
  private finishing = false;
  private readonly state: CodexState;

  constructor(
    private readonly ctx: AgentContext,
    private readonly opts: CodexAgentOptions,
  ) {
    this.state = opts.state;
  }

  get ready(): boolean {
    return !this.dead && !this.stopping && this.turn === null;
  }

  /** Input is acknowledged when the turn that took it reports idle. */
  readonly acksOnDeliver = false;

  /** First turn: the spawn prompt, unless it already ran; otherwise wait for input. */
  begin(): void {
    const prompt = this.ctx.spec.prompt;
    if (prompt && !this.state.promptDone) this.run(prompt, true);
    else void this.ctx.sink.idle();
  }

  deliver(input: AgentInput): void {
    if (this.dead || this.stopping) return;
    if (this.turn) {
      // Not at a safe point (the kernel waits for one); keep it for the next turn all the same.
      this.queued.push(input);
      return;
    }
    this.take(input);
  }

  /** Between turns there is no process: the agent ends here, `completed`. */
  finish(): void {
    if (this.dead || this.stopping) return;
    this.finishing = true;
    if (this.turn === null) this.complete();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    const turn = this.turn;
    if (turn) {
      if (turn.exitTimer) clearTimeout(turn.exitTimer);
      await killGroup(turn.child);
    }
    this.turn = null;
    if (this.opts.ownHome && (await this.ended())) this.removeHome();
  }

  private take(input: AgentInput): void {
    void this.ctx.sink.event('input', { text: input.text, seqs: input.messages.map((m) => m.seq) });
    this.run(input.text, false);
  }

  private run(text: string, isPrompt: boolean): void {
    const { ctx } = this;
    const plan: TurnPlan = {
      settings: this.opts.settings,
      cwd: ctx.spec.cwd,
      model: ctx.spec.model,
      systemPrompt: ctx.spec.systemPrompt ?? null,
      threadId: this.state.threadId,
      mcp: ctx.mcpUrl ? { url: ctx.mcpUrl, tokenEnv: TOKEN_ENV, tools: ctx.tools } : null,
    };
    const confine = confineOptions(ctx, resolve(ctx.spec.cwd ?? process.cwd()), {
      writable: [this.state.home],
    });
    const child = spawnGroup(this.opts.bin, execArgs(plan), {
      ...(ctx.spec.cwd ? { cwd: resolve(ctx.spec.cwd) } : {}),
      ...(confine ? { confine } : {}),
      env: this.opts.env,
      run: ctx.run,
      ...(ctx.deadline ? { deadline: ctx.deadline } : {}),
    });
    trackGroup(child, ctx.sink);
    const turn: Turn = {
      child,
      stderr: new Tail(),
      failure: null,
      lastError: null,
      completed: false,
      exitTimer: null,
      started: new Set(),
    };
    this.turn = turn;
    void ctx.sink.busy();
    onLines(child.stdout!, (line) => this.onLine(turn, line));
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (c: string) => turn.stderr.push(c));
    child.stdin!.on('error', () => {}); // EPIPE if it dies first: reported by 'exit'
    child.stdin!.end(text);
    child.on('error', (error) => this.turnEnded(turn, null, null, error.message, isPrompt));
    // 'exit' can come before the last lines of its output are read (a loaded machine): the
    // turn is judged once its output has ended, or after a bound if a leftover holds it open.
    const outputEnded = new Promise<void>((r) => {
      child.stdout!.once('end', r);
      child.stdout!.once('close', r);
    });
    child.on('exit', (code, signal) => {
      const bound = new Promise<void>((r) => setTimeout(r, OUTPUT_AFTER_EXIT_MS).unref());
      void Promise.race([outputEnded, bound]).then(() => this.turnEnded(turn, code, signal, null, isPrompt));
    });
  }

  private onLine(turn: Turn, line: string): void {
    if (!line.trim()) return;
    let ev: CodexEvent;
    try {
      ev = JSON.parse(line) as CodexEvent;
    } catch {
      void this.ctx.sink.event('codex_stdout', { text: line });
      return;
    }
    const { sink } = this.ctx;
    switch (ev.type) {
      case 'thread.started':
        if (ev.thread_id && ev.thread_id !== this.state.threadId) {
          this.state.threadId = ev.thread_id;
          void sink.saveState({ ...this.state });
        }
        return;
      case 'turn.started':
        return;
      case 'turn.completed': {
        turn.completed = true;
        this.reportUsage(ev.usage);
        // The turn is over; codex should exit now. Do not let it linger.
        turn.exitTimer = setTimeout(() => void killGroup(turn.child), this.opts.exitGraceMs);
        return;
      }
      case 'turn.failed':
        turn.failure = ev.error?.message ?? 'codex reported a failed turn';
        return;
      case 'error':
        turn.lastError = ev.message ?? 'codex reported an error';
        void sink.event('notice', { source: 'codex', message: turn.lastError });
        return;
      case 'item.started':
        if (ev.item) this.itemStarted(turn, ev.item);
        return;
      case 'item.completed':
        if (ev.item) this.itemCompleted(turn, ev.item);
        return;
      case 'item.updated':
        return;
      default:
        void sink.event('codex_event', { event: ev });
    }
  }

  private itemStarted(turn: Turn, item: CodexItem): void {
    const call = toolCall(item);
    if (!call) return;
    turn.started.add(item.id);
    void this.ctx.sink.event('tool_call', call);
  }

  private itemCompleted(turn: Turn, item: CodexItem): void {
    const { sink } = this.ctx;
    switch (item.type) {
      case 'agent_message':
        if (typeof item.text === 'string' && item.text.length > 0) void sink.output(item.text);
        return;
      case 'reasoning':
        void sink.event('reasoning', { text: item.text ?? '' });
        return;
      case 'error':
        // Non-fatal (a turn that fails says so with turn.failed).
        void sink.event('notice', { source: 'codex', message: item.message ?? '' });
        return;
      case 'todo_list':
        void sink.event('plan', { items: item.items ?? [] });
        return;
      case 'plan':
        void sink.event('plan', { text: item.text ?? '' });
        return;
    }
    const call = toolCall(item);
    if (!call) {
      void sink.event('codex_item', { item });
      return;
    }
    if (!turn.started.has(item.id)) void sink.event('tool_call', call);
    turn.started.delete(item.id);
    void sink.event('tool_result', toolResult(item, call));
  }

  /** codex reports the thread's running totals; the log gets what this turn added. */
  private reportUsage(u: CodexUsage | undefined): void {
    if (!u) return;
    const prev = this.state.totals;
    const now = {
      input: num(u.input_tokens),
      cached: num(u.cached_input_tokens),
      output: num(u.output_tokens),
    };
    // Totals only grow within a thread; if they did not, codex started counting afresh.
    const fresh = now.input < prev.input || now.output < prev.output || now.cached < prev.cached;
    const base = fresh ? { input: 0, cached: 0, output: 0 } : prev;
    this.state.totals = now;
    if (this.opts.metered) {
      void this.ctx.sink.usage({ turns: 1 });
      return;
    }
    const usage = {
      inputTokens: now.input - base.input,
      outputTokens: now.output - base.output,
      cachedInputTokens: now.cached - base.cached,
      turns: 1,
    };
    void this.ctx.sink.usage(usage);
  }

  private turnEnded(
    turn: Turn,
    code: number | null,
    signal: NodeJS.Signals | null,
    spawnError: string | null,
    isPrompt: boolean,
  ): void {
    if (this.turn !== turn) return; // stopped, or already finished ('error' then 'exit')
    this.turn = null;
    if (turn.exitTimer) clearTimeout(turn.exitTimer);
    // Whatever the turn left running in its process group does not outlive it.
    if (turn.child.pid !== undefined) void reapGroup(turn.child.pid);
    if (this.stopping) return;
    const { sink } = this.ctx;
    // The gateway held a model call back for a budget: the turn ends, and the budget's
    // SIGTERM, already sent, ends the session as its policy says (not a crash).
    if (turn.failure?.includes(OVER_BUDGET) || turn.lastError?.includes(OVER_BUDGET)) {
      void sink.event('notice', { source: 'codex', message: turn.failure ?? turn.lastError });
      if (this.finishing) this.complete();
      else void sink.idle();
      return;
    }
    const ok =
      spawnError === null && turn.failure === null && turn.completed && (code === 0 || signal !== null);
    if (!ok) {
      this.dead = true;
      const error = spawnError
        ? `could not run codex: ${spawnError}`
        : turn.failure
          ? `codex turn failed: ${turn.failure}`
          : code === 0 && signal === null
            ? `codex exited before its turn completed${turn.lastError ? `: ${turn.lastError}` : ''}`
            : exitedText('codex', code, signal, turn.lastError);
      sink.exit({
        reason: 'crashed',
        error,
        ...(code !== null ? { code } : {}),
        ...(signal !== null && spawnError === null && turn.failure === null ? { signal } : {}),
        stderrTail: turn.stderr.toString(),
      });
      if (this.opts.ownHome) this.removeHome();
      return;
    }
    if (isPrompt) this.state.promptDone = true;
    void sink.saveState({ ...this.state });
    if (this.finishing) {
      this.complete();
      return;
    }
    const next = this.queued.splice(0);
    if (next.length > 0) {
      // Input that came in during the turn (the kernel normally waits for idle) goes next.
      const messages = next.flatMap((i) => i.messages);
      this.take({ messages, text: next.map((i) => i.text).join('\n') });
      return;
    }
    void sink.idle();
  }

  private complete(): void {
    this.dead = true;
    this.ctx.sink.exit({ reason: 'completed' });
    if (this.opts.ownHome) this.removeHome();
  }

  /** Whether the session itself has ended (not merely suspended, or the kernel shutting down). */
  private async ended(): Promise<boolean> {
    try {
      const res = (await this.ctx.call('session_show', { id: this.ctx.sessionId })) as {
        session?: { status?: string };
      };
      return res.session?.status === 'stopped';
    } catch {
      return false;
    }
  }

  private removeHome(): void {
    try {
      rmSync(this.state.home, { recursive: true, force: true });
    } catch {}
  }
}
