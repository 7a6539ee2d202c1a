import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { invalid, WarrenError } from '../kernel/errors.ts';
import { killGroup, onLines, requireExecutable, resolveExecutable, spawnGroup, Tail } from './process.ts';
import type { AgentContext, AgentHandle, AgentInput, AgentSpec, Runtime } from './types.ts';

/**
 * The real `claude` CLI (Claude Code) as an agent, in stream-json mode:
 *
 *   claude -p --input-format stream-json --output-format stream-json --verbose
 *     --mcp-config <file> --strict-mcp-config --allowedTools mcp__warren__<tool>,…
 *     [--model <model>] [--append-system-prompt <text>] [--resume <claude session id>]
 *
 * warren is its only MCP server (Streamable HTTP, the session's bearer token), and it may
 * call exactly the tools the session's grants allow. The spawn prompt is its first user
 * message; later input is one user message per batch. Before the first message of each
 * process the runtime asks the CLI (`control_request` `mcp_status`) until warren is
 * `connected`, and fails the session loudly if it never is: an agent that cannot reach its
 * kernel must not run on as if it could. A `result` ends a turn (usage, then idle); a
 * `result` with `is_error`, or any exit the kernel did not ask for, crashes the session.
 * Resume is `--resume` with the CLI's own session id, saved as soon as its `init` names it.
 */
export class ClaudeCodeRuntime implements Runtime {
  readonly name = 'claude-code';

  validate(spec: AgentSpec): void {
    readConfig(spec);
    claudeExecutable(spec);
  }

  async start(ctx: AgentContext): Promise<AgentHandle> {
    const config = readConfig(ctx.spec);
    const exe = claudeExecutable(ctx.spec);
    if (!ctx.mcpUrl) {
      throw new WarrenError(
        'unavailable',
        'claude-code: warren is not listening on HTTP, so there is no MCP endpoint for the agent (set publicUrl / serve over HTTP)',
      );
    }
    const saved = readState(ctx.resumeState);
    const cwd = ctx.spec.cwd ?? saved.cwd ?? process.cwd();

    // The MCP config carries the session token: a private file, not an argument anyone can `ps`.
    const dir = mkdtempSync(join(tmpdir(), 'warren-claude-'));
    const mcpConfig = join(dir, 'mcp.json');
    writeFileSync(
      mcpConfig,
      JSON.stringify({
        mcpServers: {
          warren: { type: 'http', url: ctx.mcpUrl, headers: { Authorization: `Bearer ${ctx.token}` } },
        },
      }),
      { mode: 0o600 },
    );

    const allowed = [...ctx.tools.map((t) => `${MCP_PREFIX}${t}`), ...config.allowedTools];
    const args = [
      '-p',
      '--input-format',
      'stream-json',
      '--output-format',
      'stream-json',
      '--verbose',
      '--mcp-config',
      mcpConfig,
      '--strict-mcp-config',
      ...(allowed.length > 0 ? ['--allowedTools', allowed.join(',')] : []),
      ...(config.tools !== undefined ? ['--tools', config.tools] : []),
      ...(config.permissionMode ? ['--permission-mode', config.permissionMode] : []),
      ...(ctx.spec.model ? ['--model', ctx.spec.model] : []),
      ...(config.appendSystemPrompt !== false
        ? ['--append-system-prompt', config.appendSystemPrompt ?? defaultSystemPrompt(ctx)]
        : []),
      ...(saved.claudeSessionId ? ['--resume', saved.claudeSessionId] : []),
      ...config.args,
    ];
    let child: ChildProcess;
    try {
      child = spawnGroup(exe, args, {
        cwd,
        env: {
          ...process.env,
          // No auto-update, telemetry, error reports or other traffic beyond the model API.
          DISABLE_AUTOUPDATER: '1',
          CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
          DISABLE_TELEMETRY: '1',
          DISABLE_ERROR_REPORTING: '1',
          ...ctx.spec.env,
          WARREN_SESSION_ID: ctx.sessionId,
          WARREN_TOKEN: ctx.token,
          WARREN_MCP_URL: ctx.mcpUrl,
          ...(ctx.url ? { WARREN_URL: ctx.url } : {}),
        },
      });
    } catch (error) {
      rmSync(dir, { recursive: true, force: true });
      throw error;
    }
    // A first start opens with the prompt; a resume whose prompt never finished a turn sends it again.
    const first = !saved.prompted && ctx.spec.prompt ? ctx.spec.prompt : null;
    return new ClaudeAgent(ctx, child, { args, cwd, dir, first, saved, mcpTimeoutMs: config.mcpTimeoutMs });
  }
}

const MCP_PREFIX = 'mcp__warren__';
const DEFAULT_MCP_TIMEOUT_MS = 30_000;
const MCP_POLL_MS = 100;
/** Tool results are logged, but not without bound. */
const MAX_RESULT_TEXT = 8000;

interface ClaudeConfig {
  claudePath?: string;
  allowedTools: string[];
  tools?: string;
  permissionMode?: string;
  appendSystemPrompt?: string | false;
  args: string[];
  mcpTimeoutMs: number;
}

function readConfig(spec: AgentSpec): ClaudeConfig {
  const c = spec.config;
  const strings = (key: string): string[] => {
    const v = c[key];
    if (v === undefined) return [];
    if (Array.isArray(v) && v.every((x) => typeof x === 'string')) return v;
    if (typeof v === 'string')
      return v
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean);
    throw invalid(`claude-code: config.${key} must be a list of strings`);
  };
  const str = (key: string): string | undefined => {
    const v = c[key];
    if (v === undefined) return undefined;
    if (typeof v !== 'string') throw invalid(`claude-code: config.${key} must be a string`);
    return v;
  };
  const asp = c.appendSystemPrompt;
  if (asp !== undefined && asp !== false && typeof asp !== 'string')
    throw invalid('claude-code: config.appendSystemPrompt must be a string or false');
  const timeout = c.mcpTimeoutMs;
  if (timeout !== undefined && (typeof timeout !== 'number' || !(timeout > 0)))
    throw invalid('claude-code: config.mcpTimeoutMs must be a positive number');
  const claudePath = str('claudePath');
  const permissionMode = str('permissionMode');
  const tools = c.tools === undefined ? undefined : strings('tools').join(',');
  return {
    ...(claudePath !== undefined ? { claudePath } : {}),
    allowedTools: strings('allowedTools'),
    ...(tools !== undefined ? { tools } : {}),
    ...(permissionMode !== undefined ? { permissionMode } : {}),
    ...(asp !== undefined ? { appendSystemPrompt: asp as string | false } : {}),
    args: strings('args'),
    mcpTimeoutMs: (timeout as number | undefined) ?? DEFAULT_MCP_TIMEOUT_MS,
  };
}

/**
 * Which `claude` to run: `config.claudePath`, else `WARREN_CLAUDE_BIN` (the spawn's env, then
 * warren's), else the `@anthropic-ai/claude-code` installed beside warren, else `claude` on PATH.
 */
export function claudeExecutable(spec: AgentSpec): string {
  const explicit =
    (typeof spec.config.claudePath === 'string' && spec.config.claudePath) ||
    spec.env.WARREN_CLAUDE_BIN ||
    process.env.WARREN_CLAUDE_BIN;
  if (explicit) return requireExecutable(explicit, 'claude-code');
  const bundled = bundledClaude();
  if (bundled) return bundled;
  try {
    return requireExecutable('claude', 'claude-code');
  } catch (error) {
    const e = error as WarrenError;
    throw new WarrenError(
      e.code,
      `${e.message} (and no node_modules/.bin/claude beside warren): install @anthropic-ai/claude-code, or set config.claudePath or WARREN_CLAUDE_BIN`,
      e.details,
    );
  }
}

let bundledCache: string | null | undefined;
/** `node_modules/.bin/claude` in this package or any directory above it (warren installed as a dependency). */
function bundledClaude(): string | null {
  if (bundledCache !== undefined) return bundledCache;
  let dir = dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const found = resolveExecutable(join(dir, 'node_modules', '.bin', 'claude'));
    const up = dirname(dir);
    if (found || up === dir) {
      bundledCache = found;
      return found;
    }
    dir = up;
  }
}

interface SavedState {
  claudeSessionId?: string;
  cwd?: string;
  /** The spawn prompt's turn has ended: a resume must not send it again. */
  prompted?: boolean;
}

function readState(s: Record<string, unknown> | null): SavedState {
  if (!s) return {};
  return {
    ...(typeof s.claudeSessionId === 'string' ? { claudeSessionId: s.claudeSessionId } : {}),
    ...(typeof s.cwd === 'string' ? { cwd: s.cwd } : {}),
    ...(s.prompted === true ? { prompted: true } : {}),
  };
}

function defaultSystemPrompt(ctx: AgentContext): string {
  return [
    `You are running as session ${ctx.sessionId} inside warren, an agent kernel.`,
    'The tools named mcp__warren__* are warren syscalls: spawn child sessions, write to and read from streams by fd, close fds.',
    'Messages from other sessions and signals ([SIGCHLD], [SIGTERM], [ADOPTED], …) arrive as your next user message, one line each, tagged with their fd, stream, sender and seq.',
    'When your turn ends you go idle and your parent is told; close the fds you own before you finish.',
  ].join(' ');
}

// ---------------------------------------------------------------- the stream-json protocol

type Json = Record<string, unknown>;

interface Block {
  type: string;
  text?: string;
  id?: string;
  name?: string;
  input?: unknown;
  tool_use_id?: string;
  content?: unknown;
  is_error?: boolean;
}

const userMessage = (text: string) =>
  `${JSON.stringify({
    type: 'user',
    message: { role: 'user', content: text },
    parent_tool_use_id: null,
    session_id: '',
  })}\n`;

function blocksOf(message: unknown): Block[] {
  const content = (message as { content?: unknown } | undefined)?.content;
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return Array.isArray(content) ? (content as Block[]) : [];
}

function resultText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content))
    return content
      .map((c) =>
        c && typeof c === 'object' && typeof (c as Block).text === 'string' ? (c as Block).text : '',
      )
      .join('\n');
  return content === undefined ? '' : JSON.stringify(content);
}

const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

class ClaudeAgent implements AgentHandle {
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
  private lastError: string | undefined;
  private toolNames = new Map<string, string>();
  private stderr = new Tail();

  constructor(
    private readonly ctx: AgentContext,
    private readonly child: ChildProcess,
    private readonly opts: {
      args: string[];
      cwd: string;
      dir: string;
      first: string | null;
      saved: SavedState;
      mcpTimeoutMs: number;
    },
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
    this.write(
      `${JSON.stringify({
        type: 'control_request',
        request_id: `warren-mcp-${++this.pollSeq}`,
        request: { subtype: 'mcp_status' },
      })}\n`,
    );
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
        this.write(
          `${JSON.stringify({
            type: 'control_response',
            response: { subtype: 'error', request_id: msg.request_id, error: 'not supported by warren' },
          })}\n`,
        );
        return;
      case 'system':
        if (msg.subtype === 'init') this.onInit(msg);
        return;
      case 'assistant':
        this.onAssistant(msg);
        return;
      case 'user':
        this.onUser(msg);
        return;
      case 'result':
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

  private onAssistant(msg: Json): void {
    const { sink } = this.ctx;
    const parent = typeof msg.parent_tool_use_id === 'string' ? msg.parent_tool_use_id : null;
    const message = msg.message as Json | undefined;
    if (msg.error !== undefined || message?.model === '<synthetic>') {
      // The CLI's own stand-in for a failed API call: an error, not something the model said.
      const text = blocksOf(message)
        .map((b) => b.text ?? '')
        .join('\n');
      this.lastError = text || String(msg.error);
      void sink.event('error', { text: this.lastError, error: msg.error ?? null });
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
    void sink.usage({
      inputTokens: num(u.input_tokens) + num(u.cache_creation_input_tokens) + num(u.cache_read_input_tokens),
      outputTokens: num(u.output_tokens),
      costUsd: cost,
      turns: num(msg.num_turns),
    });
    const denials = Array.isArray(msg.permission_denials) ? msg.permission_denials : [];
    if (denials.length > 0) void sink.event('permission_denied', { denials });
    if (msg.is_error === true || (typeof msg.subtype === 'string' && msg.subtype.startsWith('error'))) {
      const errors = Array.isArray(msg.errors) ? msg.errors.map(String).join('; ') : '';
      const why = (typeof msg.result === 'string' && msg.result) || errors || this.lastError || 'no detail';
      this.fail(`claude turn failed (${String(msg.subtype ?? 'error')}): ${why}`);
      return;
    }
    if (!this.state.prompted) {
      this.state.prompted = true;
      void sink.saveState({ ...this.state });
    }
    this.idle = true;
    void sink.idle();
  }

  // ---- endings

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
    if (code === 0) {
      this.ctx.sink.exit({ reason: 'completed', code });
      return;
    }
    const how = signal ? `killed by ${signal}` : `exited with code ${code}`;
    this.ctx.sink.exit({
      reason: 'crashed',
      code,
      error: `claude ${how}${this.lastError ? `: ${this.lastError}` : ''}`,
      stderrTail: this.stderr.toString(),
    });
  }

  private cleanup(): void {
    rmSync(this.opts.dir, { recursive: true, force: true });
  }
}
