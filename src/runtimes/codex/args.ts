import { invalid } from '../../vocab/errors.ts';

/**
 * The command line of one `codex exec` turn: settings resolved from the runtime's defaults and
 * the spawn's `config`, turned into flags and `-c key=value` overrides (values in TOML).
 */

export type TomlValue = string | number | boolean | TomlValue[] | { [key: string]: TomlValue };

export const SANDBOX_MODES = ['read-only', 'workspace-write', 'danger-full-access'] as const;
export type SandboxMode = (typeof SANDBOX_MODES)[number];

/** Settings a spawn may give in `config` (and the runtime as defaults). */
export interface CodexSettings {
  /** The `codex` executable. */
  codexPath?: string;
  /** A Responses API base URL (e.g. `http://127.0.0.1:8080/v1`): codex talks to it as provider `warren`. */
  baseUrl?: string;
  /** With `baseUrl`: the environment variable holding the API key sent as `Authorization: Bearer`. */
  apiKeyEnv?: string;
  /** With `baseUrl`: more keys of the provider table (`request_max_retries`, `http_headers`, …). */
  provider?: Record<string, TomlValue>;
  /** The model, when the spawn does not name one. */
  model?: string;
  /** Sandbox for the shell commands codex runs (default `workspace-write`). */
  sandbox?: SandboxMode;
  /** Any other codex settings, as `-c` overrides (nested objects become dotted keys). */
  codexConfig?: Record<string, TomlValue>;
  /** Use this CODEX_HOME (kept, never removed) instead of a private one per session. */
  codexHome?: string;
}

/** What one turn needs besides the settings. */
export interface TurnPlan {
  settings: CodexSettings;
  cwd: string | null;
  model: string | null;
  /** Its persona's system prompt: codex's `developer_instructions`. */
  systemPrompt?: string | null;
  /** Continue this thread (`exec resume <id>`), or start a new one. */
  threadId: string | null;
  mcp: { url: string; tokenEnv: string; tools: readonly string[] } | null;
}

/** The provider id warren defines when it is given a base URL. */
export const PROVIDER_ID = 'warren';
/** The MCP server name codex knows warren by; its tools reach the model in namespace `mcp__warren`. */
export const MCP_SERVER = 'warren';

/**
 * `codex exec --json … [resume <id>] -`: the prompt comes on stdin (no argv size limit).
 * Exec-level options go before `resume`, as the official SDK does.
 */
export function execArgs(plan: TurnPlan): string[] {
  const s = plan.settings;
  const args = ['exec', '--json', '--skip-git-repo-check'];
  if (plan.cwd) args.push('--cd', plan.cwd);
  const model = plan.model ?? s.model;
  if (model) args.push('--model', model);
  args.push('--sandbox', s.sandbox ?? 'workspace-write');
  for (const o of overrides(plan)) args.push('-c', o);
  if (plan.threadId) args.push('resume', plan.threadId);
  args.push('-');
  return args;
}

function overrides(plan: TurnPlan): string[] {
  const s = plan.settings;
  const cfg: Record<string, TomlValue> = {
    // Unattended: never ask. Shell commands stay inside the sandbox; MCP tools are approved below.
    approval_policy: 'never',
    // No traffic but the model's and warren's: no analytics, no plugin marketplace, no web search.
    analytics: { enabled: false },
    // No login shell run per turn to snapshot the environment (each turn is a new process,
    // and what the user's shell rc starts in the background would outlive the turn).
    features: { plugins: false, shell_snapshot: false },
    web_search: 'disabled',
    check_for_update_on_startup: false,
  };
  if (plan.systemPrompt) cfg.developer_instructions = plan.systemPrompt;
  if (s.baseUrl) {
    cfg.model_provider = PROVIDER_ID;
    cfg.model_providers = {
      [PROVIDER_ID]: {
        name: PROVIDER_ID,
        base_url: s.baseUrl,
        wire_api: 'responses',
        ...(s.apiKeyEnv ? { env_key: s.apiKeyEnv } : {}),
        ...s.provider,
      },
    };
  }
  if (plan.mcp) {
    cfg.mcp_servers = {
      [MCP_SERVER]: {
        url: plan.mcp.url,
        bearer_token_env_var: plan.mcp.tokenEnv,
        enabled_tools: [...plan.mcp.tools],
        default_tools_approval_mode: 'approve',
        // An agent without warren's tools cannot read, answer or report: its turn fails, loudly,
        // rather than running without them (codex's default skips a server that fails to start).
        required: true,
        // Codex's default of 10 s is short for a server busy with many agents starting at once.
        startup_timeout_sec: 30,
      },
    };
  }
  const out: string[] = [];
  flatten(cfg, '', out);
  if (s.codexConfig) flatten(s.codexConfig, '', out);
  return out;
}

function flatten(value: Record<string, TomlValue>, prefix: string, out: string[]): void {
  for (const [k, v] of Object.entries(value)) {
    const key = prefix ? `${prefix}.${tomlKey(k)}` : tomlKey(k);
    if (isTable(v) && Object.keys(v).length > 0) flatten(v, key, out);
    else out.push(`${key}=${toml(v)}`);
  }
}

export const isTable = (v: unknown): v is Record<string, TomlValue> =>
  typeof v === 'object' && v !== null && !Array.isArray(v);

const tomlKey = (k: string) => (/^[A-Za-z0-9_-]+$/.test(k) ? k : JSON.stringify(k));

/** A TOML value; JSON string escapes are valid TOML basic-string escapes. */
export function toml(v: TomlValue): string {
  if (typeof v === 'string') return JSON.stringify(v);
  if (typeof v === 'number') {
    if (!Number.isFinite(v)) throw invalid(`codex: ${v} is not a TOML number`);
    return String(v);
  }
  if (typeof v === 'boolean') return v ? 'true' : 'false';
  if (Array.isArray(v)) return `[${v.map(toml).join(', ')}]`;
  if (isTable(v))
    return `{${Object.entries(v)
      .map(([k, x]) => `${tomlKey(k)} = ${toml(x)}`)
      .join(', ')}}`;
  throw invalid(`codex: ${JSON.stringify(v)} cannot be a codex setting`);
}

/** Defaults first, the spawn's settings over them (tables merged one level deep). */
export function mergeSettings(base: CodexSettings, over: CodexSettings): CodexSettings {
  return {
    ...base,
    ...over,
    ...(base.provider || over.provider ? { provider: { ...base.provider, ...over.provider } } : {}),
    ...(base.codexConfig || over.codexConfig
      ? { codexConfig: { ...base.codexConfig, ...over.codexConfig } }
      : {}),
  };
}
