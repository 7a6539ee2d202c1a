import type { ChildProcess } from 'node:child_process';
import { resolve as resolvePath } from 'node:path';
import { Readable, Writable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import {
  type AnyMessage,
  type ClientConnection,
  client,
  type InitializeResponse,
  type McpServer,
  ndJsonStream,
  PROTOCOL_VERSION,
  RequestError,
  type RequestPermissionRequest,
  type RequestPermissionResponse,
  type SessionConfigOption,
  type SessionModeState,
  type SessionUpdate,
  type Stream,
  type ToolCallStatus,
} from '@agentclientprotocol/sdk';
import { invalid } from '../kernel/errors.ts';
import { ConfinedFiles, FileRefused } from './acp/files.ts';
import { blockText, clip, planEntries, selectValues, toolContentText } from './acp/render.ts';
import { commandLine, killGroup, requireExecutable, spawnGroup, Tail } from './process.ts';
import type { AgentContext, AgentExit, AgentHandle, AgentInput, AgentSpec, Runtime } from './types.ts';

/**
 * Any Agent Client Protocol agent over stdio; warren is the ACP client.
 *
 * The agent runs in its own process group with stdin/stdout as the ndjson ACP stream. Start
 * is `initialize` → `session/new` (or `session/load` / `session/resume` when resuming), with
 * warren's MCP endpoint among the session's MCP servers. The spawn prompt is the first
 * `session/prompt`; each delivered input is the next one. `session/update` notifications
 * become log events: message text (one `output` per message), thoughts, tool calls and
 * results, plans; the prompt's response ends the turn (`idle`). Permission requests are
 * answered by policy (`config.permission`, default deny) and logged. File reads and writes
 * are served inside the session's working directory only; there is no terminal.
 *
 * See docs/runtimes-acp.md.
 */
export class AcpRuntime implements Runtime {
  readonly name = 'acp';

  validate(spec: AgentSpec): void {
    const [cmd] = commandLine(spec, 'acp');
    parseConfig(spec.config);
    requireExecutable(cmd, this.name);
  }

  async start(ctx: AgentContext): Promise<AgentHandle> {
    const [cmd, ...args] = commandLine(ctx.spec, 'acp');
    const config = parseConfig(ctx.spec.config);
    const exe = requireExecutable(cmd, this.name);
    const cwd = resolvePath(ctx.spec.cwd ?? process.cwd());
    const child = spawnGroup(exe, args, {
      cwd,
      env: {
        ...process.env,
        ...ctx.spec.env,
        WARREN_SESSION_ID: ctx.sessionId,
        WARREN_TOKEN: ctx.token,
        ...(ctx.url ? { WARREN_URL: ctx.url } : {}),
        ...(ctx.mcpUrl ? { WARREN_MCP_URL: ctx.mcpUrl } : {}),
      },
    });
    const agent = new AcpAgent(ctx, config, child, cwd);
    await agent.open();
    return agent;
  }
}

export type PermissionPolicy = 'allow' | 'deny';
export type McpMode = 'auto' | 'http' | 'stdio' | 'none';

export interface AcpConfig {
  /** How permission requests are answered: `deny` (the default) refuses anything not explicitly allowed. */
  permission: PermissionPolicy;
  /** How warren is offered as an MCP server: by what the agent advertises (`auto`), or forced. */
  mcp: McpMode;
  /** A session mode to switch to (by id or name), when the agent advertises it. */
  mode: string | null;
  /** How long `initialize` plus `session/new` (or load) may take. */
  startTimeoutMs: number;
}

const DEFAULT_START_TIMEOUT_MS = 120_000;
/** After `session/cancel`, how long the turn may take to wind down before the group is killed. */
const CANCEL_GRACE_MS = 500;
/** After the agent exits, how long to wait for the rest of its stdout (its last updates). */
const DRAIN_MS = 300;

function parseConfig(c: Record<string, unknown>): AcpConfig {
  const permission = c.permission ?? 'deny';
  if (permission !== 'allow' && permission !== 'deny') {
    throw invalid(`acp: config.permission must be 'allow' or 'deny', not ${JSON.stringify(permission)}`);
  }
  const mcp = c.mcp ?? 'auto';
  if (mcp !== 'auto' && mcp !== 'http' && mcp !== 'stdio' && mcp !== 'none') {
    throw invalid(`acp: config.mcp must be auto, http, stdio or none, not ${JSON.stringify(mcp)}`);
  }
  const mode = c.mode;
  if (mode !== undefined && mode !== null && typeof mode !== 'string') {
    throw invalid('acp: config.mode must be a string');
  }
  const timeout = c.startTimeoutMs ?? DEFAULT_START_TIMEOUT_MS;
  if (typeof timeout !== 'number' || !(timeout > 0)) {
    throw invalid('acp: config.startTimeoutMs must be a positive number');
  }
  return { permission, mcp, mode: mode ?? null, startTimeoutMs: timeout };
}

/** `bin/warren.js`, for agents that only take stdio MCP servers (`warren mcp` is the shim). */
const WARREN_BIN = fileURLToPath(new URL('../../bin/warren.js', import.meta.url));

type TurnState = 'starting' | 'idle' | 'turn' | 'ended';

interface ToolState {
  title: string;
  kind: string | null;
  status: ToolCallStatus | null;
}

/** Ignore a report's promise: the supervisor logs a failed write itself. */
const fire = (p: Promise<unknown>): void => void p.catch(() => {});

class AcpAgent implements AgentHandle {
  readonly acksOnDeliver = false;
  private state: TurnState = 'starting';
  private stopping = false;
  private stopped: Promise<void> | null = null;
  private ended = false;
  private readonly stderr = new Tail();
  private readonly conn: ClientConnection;
  private readonly files: ConfinedFiles;
  private acpSessionId: string | null = null;
  /** While `session/load` replays history, its updates are not new activity. */
  private replaying = false;
  private replayed = 0;
  /** The message (or thought) being streamed, flushed as one event when it ends. */
  private text: { kind: 'message' | 'thought'; id: string | null; parts: string[] } | null = null;
  private tools = new Map<string, ToolState>();
  /** Input that arrived mid-turn (the kernel does not do this; kept for safety): the next turn. */
  private queued: AgentInput[] = [];
  private turn: Promise<void> = Promise.resolve();
  private costUsd = 0;
  private exit: { code: number | null; signal: NodeJS.Signals | null } | null = null;
  private readonly exited: Promise<void>;
  private readonly stdoutEnded: Promise<void>;

  constructor(
    private readonly ctx: AgentContext,
    private readonly config: AcpConfig,
    private readonly child: ChildProcess,
    private readonly cwd: string,
  ) {
    this.files = new ConfinedFiles(cwd);
    const saved = ctx.resumeState?.costUsd;
    if (typeof saved === 'number') this.costUsd = saved;
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

    const stream = tap(
      ndJsonStream(
        Writable.toWeb(child.stdin!) as WritableStream<Uint8Array>,
        Readable.toWeb(child.stdout!) as unknown as ReadableStream<Uint8Array>,
      ),
      (m) => this.observe(m),
    );
    this.conn = client({ name: 'warren' })
      .onRequest('session/request_permission', ({ params }) => this.permission(params))
      .onRequest('fs/read_text_file', async ({ params }) => {
        this.flushText();
        try {
          const content = await this.files.read(params.path, params.line, params.limit);
          fire(this.ctx.sink.event('fs', { op: 'read', path: params.path, ok: true }));
          return { content };
        } catch (error) {
          throw this.fsError('read', params.path, error);
        }
      })
      .onRequest('fs/write_text_file', async ({ params }) => {
        this.flushText();
        try {
          await this.files.write(params.path, params.content);
          fire(
            this.ctx.sink.event('fs', {
              op: 'write',
              path: params.path,
              ok: true,
              bytes: params.content.length,
            }),
          );
          return {};
        } catch (error) {
          throw this.fsError('write', params.path, error);
        }
      })
      .connect(stream);
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
      const mcp = this.mcpServers(init);
      const restored = await this.openSession(init, mcp.servers);
      await ctx.sink.saveState(this.stateToSave());
      fire(
        ctx.sink.event('acp_session', {
          acpSessionId: this.acpSessionId,
          how: restored.how,
          resumed: ctx.resumeState !== null,
          historyRestored: restored.how !== 'new',
          ...(restored.note ? { note: restored.note } : {}),
          ...(restored.how === 'load' ? { replayed: this.replayed } : {}),
          agent: init.agentInfo ? { name: init.agentInfo.name, version: init.agentInfo.version } : null,
          protocolVersion: init.protocolVersion,
          mcp: mcp.mode,
          ...(mcp.note ? { mcpNote: mcp.note } : {}),
        }),
      );
      await this.applyOptions(restored.configOptions, restored.modes);
    } catch (error) {
      await this.failStart(error as Error);
      throw error;
    }
    // A resumed session does not replay its spawn prompt: the agent has (or lost) that turn.
    const prompt = ctx.resumeState ? null : ctx.spec.prompt;
    if (prompt) this.startTurn(prompt, null);
    else {
      this.state = 'idle';
      fire(ctx.sink.idle());
    }
  }

  private async startStep<T>(what: string, p: Promise<T>): Promise<T> {
    let timer: NodeJS.Timeout | undefined;
    try {
      return await Promise.race([
        p,
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new Error(`${what}: no answer within ${this.config.startTimeoutMs} ms`)),
            this.config.startTimeoutMs,
          );
        }),
      ]);
    } catch (error) {
      throw new Error(`${what} failed: ${describe(error)}`);
    } finally {
      clearTimeout(timer);
    }
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

  /** Warren's MCP endpoint, in the form the agent takes. */
  private mcpServers(init: InitializeResponse): {
    servers: McpServer[];
    mode: 'http' | 'stdio' | 'none';
    note?: string;
  } {
    const { ctx, config } = this;
    if (config.mcp === 'none') return { servers: [], mode: 'none', note: 'config.mcp is none' };
    if (!ctx.mcpUrl || !ctx.url) {
      return {
        servers: [],
        mode: 'none',
        note: 'warren is not listening on HTTP, so it offers no MCP server',
      };
    }
    const http = init.agentCapabilities?.mcpCapabilities?.http === true;
    if (config.mcp === 'http' || (config.mcp === 'auto' && http)) {
      return {
        mode: 'http',
        servers: [
          {
            type: 'http',
            name: 'warren',
            url: ctx.mcpUrl,
            headers: [{ name: 'Authorization', value: `Bearer ${ctx.token}` }],
          },
        ],
      };
    }
    // Every ACP agent takes stdio MCP servers: the `warren mcp` shim bridges to the daemon.
    return {
      mode: 'stdio',
      servers: [
        {
          name: 'warren',
          command: process.execPath,
          args: [WARREN_BIN, 'mcp'],
          env: [
            { name: 'WARREN_URL', value: ctx.url },
            { name: 'WARREN_TOKEN', value: ctx.token },
          ],
        },
      ],
    };
  }

  private async openSession(
    init: InitializeResponse,
    mcpServers: McpServer[],
  ): Promise<{
    how: 'new' | 'load' | 'resume';
    note?: string;
    configOptions: SessionConfigOption[] | null | undefined;
    modes: SessionModeState | null | undefined;
  }> {
    const { ctx } = this;
    const caps = init.agentCapabilities ?? {};
    const saved = typeof ctx.resumeState?.acpSessionId === 'string' ? ctx.resumeState.acpSessionId : null;
    let note: string | undefined;
    if (saved) {
      if (caps.loadSession) {
        this.acpSessionId = saved;
        this.replaying = true;
        try {
          const res = await this.startStep(
            'session/load',
            this.conn.agent.request('session/load', { sessionId: saved, cwd: this.cwd, mcpServers }),
          );
          return { how: 'load', configOptions: res.configOptions, modes: res.modes };
        } catch (error) {
          if (this.exit) throw error;
          note = `${(error as Error).message}; started a new session, history was not restored`;
        } finally {
          this.replaying = false;
        }
      } else if (caps.sessionCapabilities?.resume) {
        this.acpSessionId = saved;
        try {
          const res = await this.startStep(
            'session/resume',
            this.conn.agent.request('session/resume', { sessionId: saved, cwd: this.cwd, mcpServers }),
          );
          return { how: 'resume', configOptions: res.configOptions, modes: res.modes };
        } catch (error) {
          if (this.exit) throw error;
          note = `${(error as Error).message}; started a new session, history was not restored`;
        }
      } else {
        note =
          'the agent supports neither session/load nor session/resume: started a new session, history was not restored';
      }
      this.acpSessionId = null;
    } else if (ctx.resumeState) {
      note = 'no ACP session was saved: started a new session, history was not restored';
    }
    const res = await this.startStep(
      'session/new',
      this.conn.agent.request('session/new', { cwd: this.cwd, mcpServers }),
    );
    this.acpSessionId = res.sessionId;
    return { how: 'new', ...(note ? { note } : {}), configOptions: res.configOptions, modes: res.modes };
  }

  /** The spawn's model (and config.mode), where the agent lets a client choose them. */
  private async applyOptions(
    options: SessionConfigOption[] | null | undefined,
    modes: SessionModeState | null | undefined,
  ): Promise<void> {
    const { ctx, config } = this;
    const sessionId = this.acpSessionId!;
    const model = ctx.spec.model;
    if (model) {
      const opt = options?.find((o) => o.type === 'select' && (o.category === 'model' || o.id === 'model'));
      const values = opt ? selectValues(opt) : [];
      const match =
        values.find((v) => v.value === model) ??
        values.find((v) => v.name.toLowerCase() === model.toLowerCase());
      if (!opt) {
        fire(ctx.sink.event('model', { model, applied: false, reason: 'the agent offers no model option' }));
      } else if (!match) {
        fire(
          ctx.sink.event('model', {
            model,
            applied: false,
            reason: `not among the agent's models: ${values.map((v) => v.value).join(', ')}`,
          }),
        );
      } else {
        try {
          if (opt.currentValue !== match.value) {
            await this.startStep(
              'session/set_config_option',
              this.conn.agent.request('session/set_config_option', {
                sessionId,
                configId: opt.id,
                value: match.value,
              }),
            );
          }
          fire(ctx.sink.event('model', { model: match.value, applied: true, configId: opt.id }));
        } catch (error) {
          if (this.exit) throw error;
          fire(ctx.sink.event('model', { model, applied: false, reason: (error as Error).message }));
        }
      }
    }
    const mode = config.mode;
    if (mode) {
      const m = modes?.availableModes.find(
        (x) => x.id === mode || x.name.toLowerCase() === mode.toLowerCase(),
      );
      if (!m) {
        fire(ctx.sink.event('mode', { mode, applied: false, reason: 'the agent offers no such mode' }));
      } else {
        try {
          if (modes?.currentModeId !== m.id) {
            await this.startStep(
              'session/set_mode',
              this.conn.agent.request('session/set_mode', { sessionId, modeId: m.id }),
            );
          }
          fire(ctx.sink.event('mode', { mode: m.id, applied: true }));
        } catch (error) {
          if (this.exit) throw error;
          fire(ctx.sink.event('mode', { mode, applied: false, reason: (error as Error).message }));
        }
      }
    }
  }

  private stateToSave(): Record<string, unknown> {
    return { acpSessionId: this.acpSessionId, ...(this.costUsd ? { costUsd: this.costUsd } : {}) };
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
      this.flushText();
      if (this.stopping || this.ended) return;
      if (this.conn.signal.aborted || this.exit) return this.connectionLost();
      return this.crash(`session/prompt failed: ${describe(error)}`);
    }
    this.flushText();
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
    if (!('method' in m) || 'id' in m || m.method !== 'session/update') return;
    const params = m.params as { sessionId?: unknown; update?: SessionUpdate } | undefined;
    const update = params?.update;
    if (!update || typeof update !== 'object' || typeof update.sessionUpdate !== 'string') return;
    if (this.acpSessionId !== null && params.sessionId !== this.acpSessionId) return;
    if (this.replaying) {
      this.replayed++;
      return;
    }
    if (this.ended) return;
    try {
      this.onUpdate(update);
    } catch (error) {
      fire(
        this.ctx.sink.event('acp_error', { error: `a session/update could not be read: ${describe(error)}` }),
      );
    }
  }

  private onUpdate(u: SessionUpdate): void {
    const { sink } = this.ctx;
    switch (u.sessionUpdate) {
      case 'agent_message_chunk':
      case 'agent_thought_chunk': {
        const kind = u.sessionUpdate === 'agent_message_chunk' ? 'message' : 'thought';
        const id = u.messageId ?? null;
        if (this.text && (this.text.kind !== kind || (id !== null && this.text.id !== id))) this.flushText();
        this.text ??= { kind, id, parts: [] };
        this.text.parts.push(blockText(u.content));
        return;
      }
      case 'user_message_chunk':
        return; // the input it echoes is logged when delivered
      case 'tool_call': {
        this.flushText();
        const state: ToolState = { title: u.title, kind: u.kind ?? null, status: u.status ?? null };
        this.tools.set(u.toolCallId, state);
        fire(
          sink.event('tool_call', {
            toolCallId: u.toolCallId,
            title: u.title,
            ...(u.name ? { name: u.name } : {}),
            kind: u.kind ?? null,
            status: u.status ?? 'pending',
            ...(u.rawInput !== undefined ? { input: clip(u.rawInput) } : {}),
            ...(u.locations?.length ? { locations: u.locations.map((l) => l.path) } : {}),
          }),
        );
        if (u.status === 'completed' || u.status === 'failed') {
          this.toolResult(u.toolCallId, u.status, u.content, u.rawOutput);
        }
        return;
      }
      case 'tool_call_update': {
        this.flushText();
        const state = this.tools.get(u.toolCallId) ?? { title: u.title ?? '', kind: null, status: null };
        if (u.title) state.title = u.title;
        if (u.kind) state.kind = u.kind;
        this.tools.set(u.toolCallId, state);
        if (u.status === 'completed' || u.status === 'failed') {
          this.toolResult(u.toolCallId, u.status, u.content, u.rawOutput);
        } else if (u.status && u.status !== state.status) {
          state.status = u.status;
          fire(sink.event('tool_update', { toolCallId: u.toolCallId, title: state.title, status: u.status }));
        }
        return;
      }
      case 'plan':
        this.flushText();
        fire(sink.event('plan', { entries: planEntries(u.entries) }));
        return;
      case 'usage_update': {
        fire(sink.event('context', { used: u.used, size: u.size, ...(u.cost ? { cost: u.cost } : {}) }));
        if (u.cost && u.cost.currency === 'USD' && u.cost.amount > this.costUsd) {
          const delta = u.cost.amount - this.costUsd;
          this.costUsd = u.cost.amount;
          fire(sink.usage({ costUsd: delta }));
          fire(sink.saveState(this.stateToSave()));
        }
        return;
      }
      case 'current_mode_update':
        fire(sink.event('mode', { mode: u.currentModeId, applied: true, byAgent: true }));
        return;
      case 'session_info_update':
        if (u.title) fire(sink.event('session_info', { title: u.title }));
        return;
      default:
        return; // available commands, config option changes, …: nothing warren acts on
    }
  }

  private toolResult(id: string, status: 'completed' | 'failed', content: unknown, rawOutput: unknown): void {
    const state = this.tools.get(id);
    this.tools.delete(id);
    const text = toolContentText(content as Parameters<typeof toolContentText>[0]);
    fire(
      this.ctx.sink.event('tool_result', {
        toolCallId: id,
        title: state?.title ?? '',
        status,
        ...(text !== undefined ? { output: clip(text) } : {}),
        ...(rawOutput !== undefined && text === undefined ? { output: clip(rawOutput) } : {}),
      }),
    );
  }

  /** The message (or thought) streamed so far, as one event. */
  private flushText(): void {
    const t = this.text;
    this.text = null;
    if (!t) return;
    const text = t.parts.join('');
    if (text.trim().length === 0) return;
    if (t.kind === 'message') fire(this.ctx.sink.output(text));
    else fire(this.ctx.sink.event('thought', { text: clip(text, 16_000) }));
  }

  // ------------------------------------------------------------------ client side

  private permission(params: RequestPermissionRequest): RequestPermissionResponse {
    this.flushText();
    const policy = this.config.permission;
    const tc = params.toolCall;
    const title = tc.title ?? this.tools.get(tc.toolCallId)?.title ?? '';
    const kinds: string[] =
      policy === 'allow' ? ['allow_once', 'allow_always'] : ['reject_once', 'reject_always'];
    const option = this.stopping
      ? undefined
      : kinds.map((k) => params.options.find((o) => o.kind === k)).find((o) => o !== undefined);
    const decision = this.stopping ? 'cancelled' : policy === 'allow' && option ? 'allowed' : 'denied';
    fire(
      this.ctx.sink.event('permission', {
        toolCallId: tc.toolCallId,
        title,
        kind: tc.kind ?? this.tools.get(tc.toolCallId)?.kind ?? null,
        decision,
        policy,
        ...(option ? { optionId: option.optionId, optionKind: option.kind } : {}),
        options: params.options.map((o) => o.kind),
      }),
    );
    if (!option) return { outcome: { outcome: 'cancelled' } };
    return { outcome: { outcome: 'selected', optionId: option.optionId } };
  }

  private fsError(op: 'read' | 'write', path: string, error: unknown): RequestError {
    const message = describe(error);
    const refused = error instanceof FileRefused;
    fire(
      this.ctx.sink.event('fs', {
        op,
        path,
        ok: false,
        ...(refused ? { refused: error.why } : {}),
        error: message,
      }),
    );
    if (refused && error.why === 'missing') return RequestError.resourceNotFound(path);
    if (refused) return RequestError.invalidParams({ path }, message);
    return RequestError.internalError({ path }, message);
  }

  // ------------------------------------------------------------------ ends

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
    this.flushText();
    await killGroup(this.child);
    this.killStragglers();
    this.conn.close();
    this.ended = true;
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
    this.flushText();
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
      error:
        error ??
        (signal
          ? `killed by ${signal}`
          : code === 0
            ? 'the agent exited in the middle of a turn'
            : `exited with code ${code}`),
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
    if (this.exit.signal) return ` (the agent was killed by ${this.exit.signal})`;
    return ` (the agent exited with code ${this.exit.code})`;
  }
}

/** The stream as the SDK sees it, with every incoming message shown to `observe` first, in order. */
function tap(stream: Stream, observe: (m: AnyMessage) => void): Stream {
  return {
    writable: stream.writable,
    readable: stream.readable.pipeThrough(
      new TransformStream<AnyMessage, AnyMessage>({
        transform(m, controller) {
          observe(m);
          controller.enqueue(m);
        },
      }),
    ),
  };
}

/** Token counts from a prompt response (`usage`, an unstable ACP field some agents send). */
function reportUsage(usage: unknown, sink: AgentContext['sink']): void {
  if (!usage || typeof usage !== 'object') return;
  const u = usage as { inputTokens?: unknown; outputTokens?: unknown };
  const out: { inputTokens?: number; outputTokens?: number } = {};
  if (typeof u.inputTokens === 'number') out.inputTokens = u.inputTokens;
  if (typeof u.outputTokens === 'number') out.outputTokens = u.outputTokens;
  if (Object.keys(out).length > 0) fire(sink.usage(out));
}

function describe(error: unknown): string {
  if (error instanceof RequestError) {
    const data = error.data === undefined ? '' : `: ${String(clip(JSON.stringify(error.data), 1000))}`;
    return `${error.message}${data} (code ${error.code})`;
  }
  if (error instanceof Error) return error.message;
  return String(error);
}

const delay = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));
