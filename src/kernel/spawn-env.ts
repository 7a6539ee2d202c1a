import { globMatch } from '../util/glob.ts';
import { WarrenError } from '../vocab/errors.ts';

/**
 * Which variables a session may set in a child's environment (`env`, `secretEnv`): an
 * allowlist, not a blocklist. Loaders, libcs, shells and interpreters read far more variables
 * than any list of hooks can name (`PYTHONUSERBASE`, `BASH_FUNC_x%%`, `SHELLOPTS` + `PS4`,
 * `PERLLIB`, `GCONV_PATH`, `GLIBC_TUNABLES`, …), so a session sets only names no standard
 * program reads as code: the agent's own settings, credentials, its model's settings, the
 * runtime CLIs (checked as executables), and what the operator allows (`grants.env`).
 * Operators set anything.
 */
export const SESSION_ENV_ALLOW: readonly string[] = [
  // The agent's own settings: a namespace no standard program reads.
  'AGENT_*',
  // Credentials, by their usual names (GITHUB_TOKEN, OPENAI_API_KEY, DB_PASSWORD).
  '*_API_KEY',
  '*_TOKEN',
  '*_SECRET',
  '*_PASSWORD',
  // The model provider's settings (endpoint, model).
  'ANTHROPIC_*',
  'OPENAI_*',
  // An explicit CLI for a child runtime: matched against the `executables` grant as well.
  'WARREN_CLAUDE_BIN',
  'WARREN_CODEX_BIN',
];

/** A name a shell could hold at all; anything else (`BASH_FUNC_f%%`, `A=B`) is never a setting. */
const PLAIN_NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;
/** Never, whatever a pattern says: the dynamic loaders' own prefixes. */
const LOADER = /^(LD_|DYLD_)/;

/** Whether a session may set `name` in a child's environment, given the operator's extra patterns. */
export function envNameAllowed(name: string, extra: readonly string[] = []): boolean {
  if (!PLAIN_NAME.test(name) || LOADER.test(name)) return false;
  return [...SESSION_ENV_ALLOW, ...extra].some((p) => globMatch(p, name));
}

/**
 * Refuse the first variable of a session's spawn outside the allowlist: `forbidden`, with
 * `details.grant: "env"`, the name, and what is allowed.
 */
export function checkSessionEnv(names: Iterable<string>, extra: readonly string[] = []): void {
  for (const name of names) {
    if (envNameAllowed(name, extra)) continue;
    const allowed = [...SESSION_ENV_ALLOW, ...extra];
    throw new WarrenError(
      'forbidden',
      `setting ${JSON.stringify(name)} in a child's environment is not granted: a session may set only ${allowed.join(', ')} (an operator adds names with the grants.env setting)`,
      { grant: 'env', wanted: name, allowed },
    );
  }
}
