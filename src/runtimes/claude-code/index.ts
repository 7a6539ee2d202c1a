import type { ChildProcess } from 'node:child_process';
import { existsSync, rmSync, writeFileSync } from 'node:fs';
import { delimiter, join } from 'node:path';
import { WarrenError } from '../../vocab/errors.ts';
import { confineOptions } from '../containment.ts';
import { agentEnv } from '../env.ts';
import { ExecutableLookup } from '../executable.ts';
import { spawnGroup } from '../process.ts';
import { agentTempDir } from '../rundir.ts';
import { trackGroup } from '../tracked.ts';
import type { AgentContext, AgentHandle, AgentSpec, Runtime } from '../types.ts';
import { ClaudeAgent } from './agent.ts';
import { builtinTools } from './builtin-tools.ts';
import { type ClaudeConfig, readConfig } from './config.ts';
import { throughGateway } from './gateway.ts';
import { MCP_PREFIX, readState, type SavedState } from './protocol.ts';

/**
 * The real `claude` CLI (Claude Code) as an agent, in stream-json mode:
 *
 *   claude -p --input-format stream-json --output-format stream-json --verbose
 *     --mcp-config <file> --strict-mcp-config --allowedTools mcp__warren__<tool>,…
 *     --tools <built-in tools: config.tools, else builtin-tools.ts's WORK_TOOLS>
 *     [--model <model>] [--append-system-prompt <text>] [--resume <claude session id>]
 *
 * warren is its only MCP server (Streamable HTTP, the session's bearer token), and it may
 * call exactly the tools the session's grants allow. See `agent.ts` for the conversation and
 * docs/runtimes-claude-code.md.
 */
export class ClaudeCodeRuntime implements Runtime {
  readonly name = 'claude-code';
  readonly confines = true;

  /** Claude Code has `Bash` unless its built-in tools are listed without it. */
  runsShell(spec: AgentSpec): boolean {
    return builtinTools(readConfig(spec))
      .split(',')
      .some((t) => t.trim() === 'Bash' || t.trim() === 'default');
  }
  private readonly claude = new ExecutableLookup({
    runtime: 'claude-code',
    bin: 'claude',
    envVar: 'WARREN_CLAUDE_BIN',
    configKey: 'claudePath',
    packageName: '@anthropic-ai/claude-code',
  });

  validate(spec: AgentSpec): void {
    const config = readConfig(spec);
    this.claude.resolve(config.claudePath, spec.env);
  }

  async start(ctx: AgentContext): Promise<AgentHandle> {
    const config = readConfig(ctx.spec);
    const exe = this.claude.resolve(config.claudePath, ctx.spec.env);
    if (!ctx.mcpUrl) {
      throw new WarrenError(
        'unavailable',
        'claude-code: warren is not listening on HTTP, so there is no MCP endpoint for the agent (set publicUrl / serve over HTTP)',
      );
    }
    const saved = readState(ctx.resumeState);
    const cwd = ctx.spec.cwd ?? saved.cwd ?? process.cwd();
    // The MCP config carries the session token: a private file, not an argument anyone can `ps`.
    const dir = agentTempDir(ctx.run, 'claude');
    const mcpConfig = join(dir, 'mcp.json');
    writeFileSync(
      mcpConfig,
      JSON.stringify({
        mcpServers: {
          warren: { type: 'http', url: ctx.mcpUrl, headers: { Authorization: `Bearer ${ctx.token}` } },
          ...socketServers(config.mcpSockets),
        },
      }),
      { mode: 0o600 },
    );
    const args = cliArgs(ctx, config, mcpConfig, saved);
    const { env, apiBase, metered } = throughGateway(claudeEnv(ctx), ctx.gateway);
    let child: ChildProcess;
    try {
      const confine = confineOptions(ctx, cwd, {
        readable: [dir],
        sockets: Object.values(config.mcpSockets),
      });
      child = spawnGroup(exe, args, {
        cwd,
        env,
        run: ctx.run,
        ...(ctx.deadline ? { deadline: ctx.deadline } : {}),
        ...(confine ? { confine } : {}),
      });
    } catch (error) {
      rmSync(dir, { recursive: true, force: true });
      throw error;
    }
    trackGroup(child, ctx.sink);
    // A first start opens with the prompt; a resume whose prompt never finished a turn sends it again.
    const first = !saved.prompted && ctx.spec.prompt ? ctx.spec.prompt : null;
    return new ClaudeAgent(ctx, child, {
      args,
      cwd,
      dir,
      first,
      saved,
      mcpTimeoutMs: config.mcpTimeoutMs,
      apiBase,
      metered,
    });
  }
}

/**
 * The server variables Claude Code needs to reach its model: its API key or token and
 * endpoint. Everything else of the server's environment stays out (see `env.ts`).
 */
const CLAUDE_INHERIT = [
  'ANTHROPIC_API_KEY',
  'ANTHROPIC_AUTH_TOKEN',
  'ANTHROPIC_BASE_URL',
  'CLAUDE_CODE_OAUTH_TOKEN',
  'CLAUDE_CONFIG_DIR',
];

function claudeEnv(ctx: AgentContext): Record<string, string> {
  return agentEnv(ctx, {
    inherit: CLAUDE_INHERIT,
    // No auto-update, telemetry, error reports or other traffic beyond the model API.
    settings: {
      DISABLE_AUTOUPDATER: '1',
      CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
      DISABLE_TELEMETRY: '1',
      DISABLE_ERROR_REPORTING: '1',
    },
  });
}

/** Seed 002's MCP entry for each socket: `socat STDIO UNIX-CONNECT:<path>`. */
function socketServers(sockets: Record<string, string>): Record<string, unknown> {
  const names = Object.keys(sockets);
  if (names.length === 0) return {};
  const socat = onPath('socat');
  if (!socat) {
    throw new WarrenError(
      'runtime_unavailable',
      'claude-code: config.mcpSockets needs socat on the server’s PATH',
    );
  }
  return Object.fromEntries(
    names.map((n) => [n, { type: 'stdio', command: socat, args: ['STDIO', `UNIX-CONNECT:${sockets[n]}`] }]),
  );
}

const onPath = (bin: string): string | null =>
  (process.env.PATH ?? '')
    .split(delimiter)
    .filter(Boolean)
    .map((d) => join(d, bin))
    .find((p) => existsSync(p)) ?? null;

function cliArgs(ctx: AgentContext, config: ClaudeConfig, mcpConfig: string, saved: SavedState): string[] {
  const allowed = [
    ...ctx.tools.map((t) => `${MCP_PREFIX}${t}`),
    ...Object.keys(config.mcpSockets).map((n) => `mcp__${n}`),
    ...config.allowedTools,
  ];
  return [
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
    '--tools',
    builtinTools(config),
    ...(config.permissionMode ? ['--permission-mode', config.permissionMode] : []),
    ...(ctx.spec.model ? ['--model', ctx.spec.model] : []),
    ...appendedPrompt(ctx, config),
    ...(saved.claudeSessionId ? ['--resume', saved.claudeSessionId] : []),
    ...config.args,
  ];
}

/**
 * What goes after Claude Code's own system prompt: the persona's (replacing Claude Code's
 * would lose its tool instructions), then warren's note unless the config leaves it out.
 */
function appendedPrompt(ctx: AgentContext, config: ClaudeConfig): string[] {
  const note =
    config.appendSystemPrompt === false ? null : (config.appendSystemPrompt ?? defaultSystemPrompt(ctx));
  const text = [ctx.spec.systemPrompt, note].filter(Boolean).join('\n\n');
  return text ? ['--append-system-prompt', text] : [];
}

function defaultSystemPrompt(ctx: AgentContext): string {
  return [
    `You are running as session ${ctx.sessionId} inside warren, an agent kernel.`,
    'The tools named mcp__warren__* are warren syscalls: spawn child sessions, write to and read from streams by fd, close fds.',
    'Messages from other sessions and signals ([SIGCHLD], [SIGTERM], [ADOPTED], …) arrive as your next user message, one line each, tagged with their fd, stream, sender and seq.',
    'When your turn ends you go idle and your parent is told; close the fds you own before you finish.',
  ].join(' ');
}
