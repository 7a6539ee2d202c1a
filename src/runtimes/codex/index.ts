import { existsSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { agentEnv } from '../env.ts';
import { ExecutableLookup } from '../executable.ts';
import type { AgentContext, AgentHandle, AgentSpec, Runtime } from '../types.ts';
import { CodexAgent, type CodexState, TOKEN_ENV } from './agent.ts';
import { type CodexSettings, mergeSettings } from './args.ts';
import { settingsOf } from './config.ts';
import { throughGateway } from './gateway.ts';

/** Server variables codex needs to reach its model (its key and endpoint); nothing else leaks. */
const CODEX_INHERIT = ['OPENAI_API_KEY', 'OPENAI_BASE_URL', 'CODEX_API_KEY'];

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

export class CodexRuntime implements Runtime {
  readonly name = 'codex';
  readonly confines = true;
  private readonly codex = new ExecutableLookup({
    runtime: 'codex',
    bin: 'codex',
    envVar: 'WARREN_CODEX_BIN',
    configKey: 'codexPath',
    packageName: '@openai/codex',
  });

  constructor(private readonly options: CodexRuntimeOptions = {}) {}

  validate(spec: AgentSpec): void {
    this.codex.resolve(this.settings(spec).codexPath, spec.env);
  }

  async start(ctx: AgentContext): Promise<AgentHandle> {
    const given = this.settings(ctx.spec);
    const bin = this.codex.resolve(given.codexPath, ctx.spec.env);
    const saved = ctx.resumeState as Partial<CodexState> | null;
    const own = !given.codexHome;
    const home = given.codexHome ?? saved?.home ?? join(this.homeRoot(), safeName(ctx.sessionId));
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
    const { env, settings, metered } = throughGateway(
      agentEnv(ctx, {
        inherit: given.apiKeyEnv ? [...CODEX_INHERIT, given.apiKeyEnv] : CODEX_INHERIT,
        settings: this.options.env ?? {},
        warren: { CODEX_HOME: home },
      }),
      given,
      ctx.gateway,
      TOKEN_ENV,
    );
    const agent = new CodexAgent(ctx, {
      bin,
      settings,
      state,
      ownHome: own,
      env,
      exitGraceMs: this.options.exitGraceMs ?? 5000,
      metered,
    });
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
}

const safeName = (id: string) => id.replace(/[^A-Za-z0-9_.-]/g, '_');
