import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { WarrenError } from '../kernel/errors.ts';
import {
  type CodexSettings,
  execArgs,
  MCP_SERVER,
  mergeSettings,
  settingsOf,
  type TurnPlan,
} from './codex/args.ts';
import { killGroup, onLines, resolveExecutable, spawnGroup, Tail } from './process.ts';
import type { AgentContext, AgentHandle, AgentInput, AgentSpec, Runtime } from './types.ts';

/**
 * The real `codex` CLI as an agent. `codex exec` runs one turn per process and reads its
 * prompt to EOF (there is no follow-up input on stdin), so every turn is a process:
 * `codex exec --json … -` for the first, `codex exec --json … resume <thread> -` after it,
 * the turn's input on stdin. Between turns the agent is at a safe point (`ready`).
 *
 * Each session gets its own CODEX_HOME (its threads, its state databases; never the user's
 * ~/.codex), kept while the session can still be resumed and removed when it ends. Warren is
 * its MCP server `warren` (Streamable HTTP, the session token as bearer, only its granted
 * tools, approved without asking). See docs/runtimes-codex.md.
 */

export interface CodexRuntimeOptions extends CodexSettings {
  /** Where the per-session CODEX_HOMEs go; default `<os tmp>/warren-codex`. */
  homeRoot?: string;
  /** Extra environment for every codex process (a spawn's `env` goes over it). */
  env?: Record<string, string>;
  /** After `turn.completed`, how long codex may take to exit before it is stopped (ms). */
  exitGraceMs?: number;
}

/** What a session saves for resume. */
interface CodexState {
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

/** The environment variable codex reads the session token from (`bearer_token_env_var`). */
const TOKEN_ENV = 'WARREN_TOKEN';

const PROJECT_BIN = fileURLToPath(new URL('../../node_modules/.bin/codex', import.meta.url));

export class CodexRuntime implements Runtime {
  readonly name = 'codex';

  constructor(private readonly options: CodexRuntimeOptions = {}) {}

  validate(spec: AgentSpec): void {
    this.binary(this.settings(spec));
  }

  async start(ctx: AgentContext): Promise<AgentHandle> {
    const settings = this.settings(ctx.spec);
    const bin = this.binary(settings);
    const saved = ctx.resumeState as Partial<CodexState> | null;
    const own = !settings.codexHome;
    const home = settings.codexHome ?? saved?.home ?? join(this.homeRoot(), safeName(ctx.sessionId));
    if (saved?.threadId && !existsSync(home)) {
      throw new Error(`codex thread ${saved.threadId} cannot be resumed: its CODEX_HOME ${home} is gone`);
    }
    mkdirSync(home, { recursive: true, mode: 0o700 });
    const state: CodexState = {
      threadId: saved?.threadId ?? null,
      home,
      promptDone: saved?.promptDone ?? false,
      totals: { input: 0, cached: 0, output: 0, ...saved?.totals },
    };
    const agent = new CodexAgent(
      ctx,
      bin,
      settings,
      state,
      own,
      {
        ...this.options.env,
        ...ctx.spec.env,
      },
      this.options.exitGraceMs ?? 5000,
    );
    agent.begin();
    return agent;
  }

  private settings(spec: AgentSpec): CodexSettings {
    const { homeRoot: _h, env: _e, exitGraceMs: _g, ...defaults } = this.options;
    return mergeSettings(defaults, settingsOf(spec.config));
  }

  private homeRoot(): string {
    return this.options.homeRoot ?? join(tmpdir(), 'warren-codex');
  }

  /** config.codexPath, else WARREN_CODEX_BIN, else this project's node_modules/.bin/codex, else `codex` on PATH. */
  private binary(settings: CodexSettings): string {
    const explicit = settings.codexPath
      ? { path: settings.codexPath, from: 'config.codexPath' }
      : process.env.WARREN_CODEX_BIN
        ? { path: process.env.WARREN_CODEX_BIN, from: 'WARREN_CODEX_BIN' }
        : null;
    if (explicit) {
      const found = resolveExecutable(explicit.path);
      if (found) return found;
      throw new WarrenError(
        'runtime_unavailable',
        `codex: executable ${JSON.stringify(explicit.path)} (from ${explicit.from}) was not found or is not executable`,
        { runtime: this.name, missing: explicit.path, from: explicit.from },
      );
    }
    const found = resolveExecutable(PROJECT_BIN) ?? resolveExecutable('codex');
    if (found) return found;
    throw new WarrenError(
      'runtime_unavailable',
      'codex: the codex CLI was not found (set config.codexPath or WARREN_CODEX_BIN, install @openai/codex in this project, or put codex on PATH)',
      { runtime: this.name, missing: 'codex' },
    );
  }
}

const safeName = (id: string) => id.replace(/[^A-Za-z0-9_.-]/g, '_');

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

class CodexAgent implements AgentHandle {
  private turn: Turn | null = null;
  private queued: AgentInput[] = [];
  private stopping = false;
  private dead = false;

  constructor(
    private readonly ctx: AgentContext,
    private readonly bin: string,
    private readonly settings: CodexSettings,
    private readonly state: CodexState,
    /** The home is this session's own (made here, removed when the session ends). */
    private readonly ownHome: boolean,
    private readonly env: Record<string, string>,
    private readonly exitGraceMs: number,
  ) {}

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

  async stop(): Promise<void> {
    this.stopping = true;
    const turn = this.turn;
    if (turn) {
      if (turn.exitTimer) clearTimeout(turn.exitTimer);
      await killGroup(turn.child);
    }
    this.turn = null;
    if (this.ownHome && (await this.ended())) this.removeHome();
  }

  private take(input: AgentInput): void {
    void this.ctx.sink.event('input', { text: input.text, seqs: input.messages.map((m) => m.seq) });
    this.run(input.text, false);
  }

  private run(text: string, isPrompt: boolean): void {
    const { ctx } = this;
    const plan: TurnPlan = {
      settings: this.settings,
      cwd: ctx.spec.cwd,
      model: ctx.spec.model,
      threadId: this.state.threadId,
      mcp: ctx.mcpUrl ? { url: ctx.mcpUrl, tokenEnv: TOKEN_ENV, tools: ctx.tools } : null,
    };
    const child = spawnGroup(this.bin, execArgs(plan), {
      ...(ctx.spec.cwd ? { cwd: resolve(ctx.spec.cwd) } : {}),
      env: {
        ...process.env,
        ...this.env,
        CODEX_HOME: this.state.home,
        [TOKEN_ENV]: ctx.token,
        WARREN_SESSION_ID: ctx.sessionId,
        ...(ctx.url ? { WARREN_URL: ctx.url } : {}),
        ...(ctx.mcpUrl ? { WARREN_MCP_URL: ctx.mcpUrl } : {}),
      },
    });
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
    child.on('exit', (code, signal) => this.turnEnded(turn, code, signal, null, isPrompt));
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
        turn.exitTimer = setTimeout(() => void killGroup(turn.child), this.exitGraceMs);
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
    const ok =
      spawnError === null && turn.failure === null && turn.completed && (code === 0 || signal !== null);
    if (!ok) {
      this.dead = true;
      const error =
        spawnError ??
        turn.failure ??
        turn.lastError ??
        (signal
          ? `codex was killed by ${signal}`
          : code === 0
            ? 'codex exited before its turn completed'
            : `codex exited with code ${code}`);
      sink.exit({
        reason: 'crashed',
        error,
        ...(code !== null ? { code } : {}),
        stderrTail: turn.stderr.toString(),
      });
      if (this.ownHome) this.removeHome();
      return;
    }
    if (isPrompt) this.state.promptDone = true;
    void sink.saveState({ ...this.state });
    const next = this.queued.splice(0);
    if (next.length > 0) {
      // Input that came in during the turn (the kernel normally waits for idle) goes next.
      const messages = next.flatMap((i) => i.messages);
      this.take({ messages, text: next.map((i) => i.text).join('\n') });
      return;
    }
    void sink.idle();
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

/** SIGTERM what is left in a process group whose leader has exited; SIGKILL it after a grace. */
async function reapGroup(pgid: number, graceMs = 1000): Promise<void> {
  const alive = () => {
    try {
      process.kill(-pgid, 0);
      return true;
    } catch {
      return false;
    }
  };
  if (!alive()) return;
  try {
    process.kill(-pgid, 'SIGTERM');
  } catch {}
  const end = Date.now() + graceMs;
  while (alive() && Date.now() < end) await new Promise((r) => setTimeout(r, 50));
  try {
    process.kill(-pgid, 'SIGKILL');
  } catch {}
}

// ------------------------------------------------------------ codex exec --json events

interface CodexUsage {
  input_tokens?: number;
  cached_input_tokens?: number;
  output_tokens?: number;
}

interface CodexItem {
  id: string;
  type: string;
  text?: string;
  message?: string;
  items?: unknown[];
  // mcp_tool_call
  server?: string;
  tool?: string;
  arguments?: unknown;
  result?: unknown;
  error?: { message?: string } | null;
  status?: string;
  // command_execution
  command?: string;
  aggregated_output?: string;
  exit_code?: number | null;
  // file_change
  changes?: unknown[];
  // web_search
  query?: string;
  // collab_tool_call
  prompt?: string | null;
  receiver_thread_ids?: string[];
}

interface CodexEvent {
  type: string;
  thread_id?: string;
  usage?: CodexUsage;
  error?: { message?: string };
  message?: string;
  item?: CodexItem;
}

const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

/** The `tool_call` event for an item that is a tool call, or null. */
function toolCall(item: CodexItem): Record<string, unknown> | null {
  switch (item.type) {
    case 'mcp_tool_call':
      return {
        id: item.id,
        tool: item.tool ?? '',
        server: item.server ?? null,
        // Warren's own tools carry their syscall names.
        ...(item.server === MCP_SERVER ? { syscall: item.tool } : {}),
        input: item.arguments ?? {},
      };
    case 'command_execution':
      return { id: item.id, tool: 'shell', input: { command: item.command ?? '' } };
    case 'file_change':
      return { id: item.id, tool: 'apply_patch', input: { changes: item.changes ?? [] } };
    case 'web_search':
      return { id: item.id, tool: 'web_search', input: { query: item.query ?? '' } };
    case 'collab_tool_call':
      return {
        id: item.id,
        tool: `collab.${item.tool ?? ''}`,
        input: { prompt: item.prompt ?? null, receivers: item.receiver_thread_ids ?? [] },
      };
    default:
      return null;
  }
}

const MAX_OUTPUT = 16_384;
const clip = (s: string) => (s.length > MAX_OUTPUT ? `${s.slice(0, MAX_OUTPUT)}… (${s.length} chars)` : s);

/** A tool's result as is, or (when it is large) its JSON text clipped. */
function clipJson(v: unknown): unknown {
  const text = JSON.stringify(v) ?? 'null';
  return text.length > MAX_OUTPUT ? { truncated: true, text: clip(text) } : v;
}

function toolResult(item: CodexItem, call: Record<string, unknown>): Record<string, unknown> {
  const failed = item.status === 'failed' || item.status === 'declined' || !!item.error;
  const base = { id: item.id, tool: call.tool, status: item.status ?? (failed ? 'failed' : 'completed') };
  switch (item.type) {
    case 'mcp_tool_call':
      return {
        ...base,
        server: item.server ?? null,
        ...(item.server === MCP_SERVER ? { syscall: item.tool } : {}),
        ...(item.error
          ? { error: item.error.message ?? 'failed' }
          : { output: clipJson(item.result ?? null) }),
      };
    case 'command_execution':
      return {
        ...base,
        exitCode: item.exit_code ?? null,
        output: clip(item.aggregated_output ?? ''),
      };
    default:
      return { ...base, ...(item.error ? { error: item.error.message ?? 'failed' } : {}) };
  }
}
