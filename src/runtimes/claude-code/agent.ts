import type { ChildProcess } from 'node:child_process';
import { rmSync } from 'node:fs';
import { OVER_BUDGET } from '../../vocab/gateway.ts';
import { exitedText } from '../errors.ts';
import { killGroup, onLines, Tail } from '../process.ts';
import type { AgentContext, AgentHandle, AgentInput } from '../types.ts';
import {
  blocksOf,
  controlError,
  controlRequest,
  failedResultText,
  type Json,
  MCP_PREFIX,
  noAnswer,
  num,
  resultText,
  retryActivity,
  retryWhy,
  type SavedState,
  userMessage,
} from './protocol.ts';
import { unreachableCause } from './reach.ts';

const MCP_POLL_MS = 100;
/** Tool results are logged, but not without bound. */
const MAX_RESULT_TEXT = 8000;

export interface ClaudeAgentOptions {
  args: string[];
  cwd: string;
  /** The private dir holding mcp.json (with the token): removed when the process ends. */
  dir: string;
  first: string | null;
  saved: SavedState;
  mcpTimeoutMs: number;
  /** Where the CLI's model calls really go (reach.ts): probed when a call gets no answer. */
  apiBase: string;
  /**
   * Its model calls go through warren's gateway, which records their usage from the
   * provider's answers: the turn's own report then carries only its turns, so nothing is
   * counted twice.
   */
  metered: boolean;
}

/**
 * One `claude` process. Before the first message the agent asks the CLI (`control_request`
 * `mcp_status`) until warren is `connected`, and fails the session loudly if it never is: an
 * agent that cannot reach its kernel must not run on as if it could. A `result` ends a turn
 * (usage, then idle); a `result` with `is_error`, or any exit the kernel did not ask for,
 * crashes the session. Resume is `--resume` with the CLI's session id, saved from `init`.
 */
export class ClaudeAgent implements AgentHandle {
  /** Between turns, with warren connected: input may be written now. */
  private idle = false;
  private ended = false;
  private stopping = false;
  private mcpReady = false;
  private mcpPoll: NodeJS.Timeout | undefined;
  private mcpDeadline: number;
  private pollSeq = 0;
  private first: string | null;
  private state: SavedState;
  private lastCost = 0;
  /**
   * The last turn ended on a call the gateway held back for a budget: the CLI exits 1 when
   * its input ends after such a turn, which is the budget's stop, not a crash.
   */
  private heldBack = false;
  /** The CLI's own stand-in text for a failed API call, if the turn had one. */
  private lastApiError: string | undefined;
  /** A status is shown (an API retry): cleared by the next message or result. */
  private showingActivity = false;
  /**
   * The CLI waits to retry a model call (its last line was `api_retry`): nothing of the turn is
   * in flight, and nothing can finish before the model answers.
   */
  private retrying = false;
  /** Counts retries and what clears them: a probe's late answer must not revive a cleared status. */
  private retryEpoch = 0;
  /** Why the model API cannot be reached (reach.ts), while its calls get no answer. */
  private unreachable: string | null = null;
  /** A stop was asked of the session (`termAsked`): it ends as soon as it is only retrying. */
  private termRequested = false;
  private toolNames = new Map<string, string>();
  private stderr = new Tail();

  constructor(
    private readonly ctx: AgentContext,
    private readonly child: ChildProcess,
    private readonly opts: ClaudeAgentOptions,
  ) {
    this.first = opts.first;
    this.state = { ...opts.saved, cwd: opts.cwd };
    this.mcpDeadline = Date.now() + opts.mcpTimeoutMs;
    onLines(child.stdout!, (line) => this.onLine(line));
    child.stderr!.setEncoding('utf8');
    child.stderr!.on('data', (c: string) => this.stderr.push(c));
    child.stdin!.on('error', () => {}); // EPIPE after exit is reported by 'close'
    child.on('error', (error) => this.fail(`could not run claude: ${error.message}`));
    // 'close', not 'exit': every line it printed has been read by then.
    child.on('close', (code, signal) => this.onClose(code, signal));
    void ctx.sink.event('claude_started', {
      pid: child.pid ?? null,
      args: opts.args,
      cwd: opts.cwd,
      resume: opts.saved.claudeSessionId ?? null,
    });
    this.pollMcp();
  }

  get ready(): boolean {
    return this.idle && !this.ended && !this.stopping;
  }

  deliver(input: AgentInput): void {
    this.idle = false;
    this.write(userMessage(input.text));
    const { sink } = this.ctx;
    void sink.busy();
    void sink.event('input', { text: input.text, seqs: input.messages.map((m) => m.seq) });
  }

  /** End the CLI's input: it finishes (it is idle) and exits 0, which reports `completed`. */
  finish(): void {
    if (this.ended || this.stopping) return;
    this.idle = false;
    clearTimeout(this.mcpPoll);
    this.child.stdin?.end();
  }

  /**
   * A SIGTERM (or a quiet end) is pending. The grace period is for finishing the turn; a CLI
   * waiting to retry the model API has nothing in flight that could finish before the model
   * answers, so it ends now (docs/decisions.md); otherwise when it next starts waiting.
   */
  termAsked(): void {
    this.termRequested = true;
    if (this.retrying) this.endAtTerm();
  }

  async stop(): Promise<void> {
    this.stopping = true;
    this.idle = false;
    clearTimeout(this.mcpPoll);
    await killGroup(this.child);
    this.cleanup();
  }

  private write(line: string): void {
    if (this.child.stdin?.writable) this.child.stdin.write(line);
  }

  // ---- warren must be connected before the agent works

  private pollMcp(): void {
    if (this.ended || this.stopping || this.mcpReady) return;
    if (Date.now() > this.mcpDeadline) {
      this.fail(`warren MCP server not connected: still pending after ${this.opts.mcpTimeoutMs} ms`);
      return;
    }
    this.write(controlRequest(`warren-mcp-${++this.pollSeq}`, 'mcp_status'));
    // The next poll is armed when this one is answered (or, if it is not, after a while).
    clearTimeout(this.mcpPoll);
    this.mcpPoll = setTimeout(() => this.pollMcp(), Math.max(MCP_POLL_MS, this.opts.mcpTimeoutMs / 3));
    this.mcpPoll.unref();
  }

  private onControlResponse(msg: Json): void {
    const response = (msg.response ?? {}) as Json;
    const id = String(response.request_id ?? '');
    if (!id.startsWith('warren-mcp-') || this.mcpReady || this.ended) return;
    clearTimeout(this.mcpPoll);
    if (response.subtype !== 'success') {
      // A CLI without the control request: the `init` check below is all there is.
      this.mcpConnected();
      return;
    }
    const servers = ((response.response as Json | undefined)?.mcpServers ?? []) as Json[];
    const warren = servers.find((s) => s.name === 'warren');
    const status = String(warren?.status ?? 'missing');
    if (status === 'connected') {
      this.mcpConnected();
      return;
    }
    if (status !== 'pending') {
      const why = warren?.error ? ` (${String(warren.error)})` : '';
      this.fail(`warren MCP server not connected: ${status}${why}`);
      return;
    }
    this.mcpPoll = setTimeout(() => this.pollMcp(), MCP_POLL_MS);
    this.mcpPoll.unref();
  }

  private mcpConnected(): void {
    this.mcpReady = true;
    if (this.first !== null) {
      const prompt = this.first;
      this.first = null;
      this.write(userMessage(prompt));
      void this.ctx.sink.busy();
      return;
    }
    // Nothing to do until input arrives: a safe point.
    this.idle = true;
    void this.ctx.sink.idle();
  }

  // ---- what the CLI says

  private onLine(line: string): void {
    if (!line.startsWith('{')) return;
    let msg: Json;
    try {
      msg = JSON.parse(line) as Json;
    } catch {
      return;
    }
    if (this.ended) return;
    switch (msg.type) {
      case 'control_response':
        this.onControlResponse(msg);
        return;
      case 'control_request':
        // Nothing here answers the CLI's requests (no permission prompt tool, no SDK hooks).
        this.write(controlError(msg.request_id, 'not supported by warren'));
        return;
      case 'system':
        if (msg.subtype === 'init') this.onInit(msg);
        else if (msg.subtype === 'api_retry') this.onRetry(msg);
        return;
      case 'assistant':
        this.clearActivity();
        this.onAssistant(msg);
        return;
      case 'user':
        this.onUser(msg);
        return;
      case 'result':
        this.clearActivity();
        this.onResult(msg);
        return;
    }
  }

  private onInit(msg: Json): void {
    const servers = (msg.mcp_servers ?? []) as Json[];
    const warren = servers.find((s) => s.name === 'warren');
    if (warren?.status !== 'connected') {
      this.fail(`warren MCP server not connected: ${String(warren?.status ?? 'missing')}`);
      return;
    }
    const sid = typeof msg.session_id === 'string' ? msg.session_id : undefined;
    if (sid && sid !== this.state.claudeSessionId) {
      this.state.claudeSessionId = sid;
      void this.ctx.sink.saveState({ ...this.state });
    }
  }

  /**
   * The model API failed (529, overloaded, …) and the CLI waits to try again: show it. A call
   * that got no answer at all the CLI calls only "unknown": warren finds out why (reach.ts,
   * milliseconds on a refused or unresolvable endpoint, at most 3 s) before it says so.
   */
  private onRetry(msg: Json): void {
    this.retrying = true;
    this.showingActivity = true;
    const epoch = ++this.retryEpoch;
    if (this.termRequested) {
      this.endAtTerm(msg);
      return;
    }
    if (!noAnswer(msg)) {
      this.unreachable = null;
      this.reportRetry(msg, true);
      return;
    }
    void unreachableCause(this.opts.apiBase).then((cause) => {
      if (this.ended || this.stopping) return;
      this.unreachable = cause;
      // A line that came meanwhile (the answer, the next retry) has the newer status.
      this.reportRetry(msg, epoch === this.retryEpoch);
    });
  }

  private reportRetry(msg: Json, current: boolean): void {
    if (current) void this.ctx.sink.activity(retryActivity(msg, this.unreachable));
    void this.ctx.sink.event('api_retry', {
      attempt: num(msg.attempt),
      maxRetries: num(msg.max_retries),
      status: typeof msg.error_status === 'number' ? msg.error_status : null,
      error: retryWhy(msg, this.unreachable),
      delayMs: Math.round(num(msg.retry_delay_ms)),
    });
  }

  private clearActivity(): void {
    this.retrying = false;
    this.retryEpoch++;
    if (!this.showingActivity) return;
    this.showingActivity = false;
    void this.ctx.sink.activity(null);
  }

  private onAssistant(msg: Json): void {
    const { sink } = this.ctx;
    const parent = typeof msg.parent_tool_use_id === 'string' ? msg.parent_tool_use_id : null;
    const message = msg.message as Json | undefined;
    if (msg.error !== undefined || message?.model === '<synthetic>') {
      // The CLI's own stand-in for a failed API call: an error, not something the model said.
      const text = blocksOf(message)
        .map((b) => b.text ?? '')
        .join('\n');
      this.lastApiError = text || String(msg.error);
      void sink.event('error', { text: this.lastApiError, error: msg.error ?? null });
      return;
    }
    for (const b of blocksOf(message)) {
      if (b.type === 'text' && b.text) {
        if (parent) void sink.event('subagent_output', { text: b.text, parentToolUseId: parent });
        else void sink.output(b.text);
      } else if (b.type === 'tool_use' && b.id && b.name) {
        this.toolNames.set(b.id, b.name);
        void sink.event('tool_call', {
          id: b.id,
          name: b.name,
          ...(b.name.startsWith(MCP_PREFIX) ? { syscall: b.name.slice(MCP_PREFIX.length) } : {}),
          input: b.input ?? {},
          ...(parent ? { parentToolUseId: parent } : {}),
        });
      }
    }
  }

  private onUser(msg: Json): void {
    const parent = typeof msg.parent_tool_use_id === 'string' ? msg.parent_tool_use_id : null;
    for (const b of blocksOf(msg.message)) {
      if (b.type !== 'tool_result' || !b.tool_use_id) continue;
      const text = resultText(b.content);
      void this.ctx.sink.event('tool_result', {
        id: b.tool_use_id,
        name: this.toolNames.get(b.tool_use_id) ?? null,
        isError: b.is_error === true,
        text: text.length > MAX_RESULT_TEXT ? `${text.slice(0, MAX_RESULT_TEXT)}…` : text,
        ...(parent ? { parentToolUseId: parent } : {}),
      });
    }
  }

  private onResult(msg: Json): void {
    const { sink } = this.ctx;
    const u = (msg.usage ?? {}) as Json;
    // `usage` is this turn's; `total_cost_usd` is the process's running total.
    const total = num(msg.total_cost_usd);
    const cost = Math.max(0, total - this.lastCost);
    this.lastCost = total;
    void sink.usage(
      this.opts.metered
        ? { turns: num(msg.num_turns) }
        : {
            inputTokens:
              num(u.input_tokens) + num(u.cache_creation_input_tokens) + num(u.cache_read_input_tokens),
            outputTokens: num(u.output_tokens),
            costUsd: cost,
            turns: num(msg.num_turns),
          },
    );
    const denials = Array.isArray(msg.permission_denials) ? msg.permission_denials : [];
    if (denials.length > 0) void sink.event('permission_denied', { denials });
    const isError =
      msg.is_error === true || (typeof msg.subtype === 'string' && msg.subtype.startsWith('error'));
    // The gateway held a call back for a budget (its error is logged): the turn ends, and the
    // budget's SIGTERM, already sent, ends the session as its policy says.
    this.heldBack = isError && this.lastApiError?.includes(OVER_BUDGET) === true;
    if (isError && !this.heldBack) {
      const failed = failedResultText(msg, this.lastApiError);
      this.fail(this.unreachable ? `model API unreachable: ${this.unreachable} (${failed})` : failed);
      return;
    }
    this.lastApiError = undefined;
    this.unreachable = null;
    if (!this.state.prompted) {
      this.state.prompted = true;
      void sink.saveState({ ...this.state });
    }
    this.idle = true;
    void sink.idle();
  }

  // ---- endings

  /**
   * Asked to stop while only waiting to retry the model API: end now. `completed` with a stop
   * pending is recorded as `terminated`; `error` says why it did not wait out its grace.
   */
  private endAtTerm(retry?: Json): void {
    if (this.ended || this.stopping) return;
    this.ended = true;
    this.idle = false;
    clearTimeout(this.mcpPoll);
    const why = retry
      ? retryWhy(retry, this.unreachable)
      : this.unreachable
        ? `unreachable: ${this.unreachable}`
        : null;
    this.ctx.sink.exit({
      reason: 'completed',
      error: `it was only waiting to retry the model API${why ? ` (${why})` : ''}, so it ended at once`,
    });
    void killGroup(this.child).finally(() => this.cleanup());
  }

  /** Crash the session, loudly, and take the process down with it. */
  private fail(error: string): void {
    if (this.ended || this.stopping) return;
    this.ended = true;
    this.idle = false;
    clearTimeout(this.mcpPoll);
    this.ctx.sink.exit({ reason: 'crashed', error, stderrTail: this.stderr.toString() });
    void killGroup(this.child).finally(() => this.cleanup());
  }

  private onClose(code: number | null, signal: NodeJS.Signals | null): void {
    clearTimeout(this.mcpPoll);
    this.cleanup();
    if (this.ended || this.stopping) return;
    this.ended = true;
    this.idle = false;
    if (code === 0 || (code === 1 && this.heldBack)) {
      this.ctx.sink.exit({ reason: 'completed', code });
      return;
    }
    this.ctx.sink.exit({
      reason: 'crashed',
      code,
      signal,
      error: exitedText('claude', code, signal, this.lastApiError),
      stderrTail: this.stderr.toString(),
    });
  }

  private cleanup(): void {
    rmSync(this.opts.dir, { recursive: true, force: true });
  }
}
