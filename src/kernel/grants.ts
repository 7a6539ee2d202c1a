import { realpathSync } from 'node:fs';
import { isAbsolute, relative, resolve } from 'node:path';
import { resolveExecutable, splitCommandLine } from '../runtimes/process/exec.ts';
import type { SessionsTable } from '../store/schema.ts';
import { compileGlob, GlobTooLongError, globMatch } from '../util/glob.ts';
import { parseJson } from '../util/json.ts';
import { invalid, WarrenError } from '../vocab/errors.ts';
import type { Principal } from '../vocab/principal.ts';
import type { ResolvedSpawnRequest } from './types.ts';

/**
 * Spawn grants: what a session may start, like its tools a grant that only narrows down the
 * tree. A session's grants are fixed at its spawn and stored on its row (`spawn_grants`), so
 * neither adoption nor a restart can widen them. `null` in a field means "anything": only
 * operators start with that.
 */
export interface SpawnGrants {
  /** Runtime names it may spawn. */
  runtimes: string[] | null;
  /**
   * Absolute globs (`*` = any run of characters) over the real path (symlinks resolved) of
   * every executable a spawn names: the `command` of a `command` or `acp` spawn, and an
   * explicit CLI (`config.claudePath`, `config.codexPath`, `WARREN_CLAUDE_BIN`,
   * `WARREN_CODEX_BIN` in its env). A runtime's own lookup (node_modules, PATH) needs none.
   */
  executables: string[] | null;
  /** Canonical roots its children's working directories must lie in. */
  cwd: string[] | null;
  /** Secret names it may hand on to a child (`secretEnv`). */
  secrets: string[] | null;
  /**
   * The network its own agent gets when confined, and the most its children may get: `none`
   * (warren's endpoint only) or `full`. Null (or absent, on rows from before it): not narrowed
   * by a grant, the node's `containmentNetwork` decides (containment.ts).
   */
  network?: NetworkGrant | null;
}

export type NetworkGrant = 'full' | 'none';

export type GrantRequest = Partial<SpawnGrants>;

export const UNRESTRICTED: SpawnGrants = { runtimes: null, executables: null, cwd: null, secrets: null };

/**
 * The runtimes an agent of each kind may spawn unless an operator says otherwise: its own
 * kind and `script`. A `command` agent is any program, so it gets no `command` by default;
 * neither does anyone else.
 */
const KIND_RUNTIMES: Record<string, readonly string[]> = {
  script: ['script'],
  command: ['script'],
  'claude-code': ['claude-code', 'script'],
  codex: ['codex', 'script'],
  acp: ['acp', 'script'],
};

/** Where explicit executables hide in a spawn: config keys and env variables. */
const CLI_CONFIG_KEYS = ['claudePath', 'codexPath'] as const;
const CLI_ENV_VARS = ['WARREN_CLAUDE_BIN', 'WARREN_CODEX_BIN'] as const;
const COMMAND_RUNTIMES = new Set(['command', 'acp']);

const forbiddenGrant = (grant: keyof SpawnGrants, wanted: string, message: string) =>
  new WarrenError('forbidden', `${message}: this session lacks the ${grant} grant for it`, { grant, wanted });

/** A path made canonical (absolute, symlinks resolved), or `invalid_input` when it does not exist. */
function canonical(path: string, base: string, what: string): string {
  try {
    return realpathSync(resolve(base, path));
  } catch {
    throw invalid(`${what} ${JSON.stringify(path)} does not exist`, { field: what });
  }
}

export const within = (path: string, root: string) => {
  const rel = relative(root, path);
  return rel === '' || (rel !== '..' && !rel.startsWith('../') && !isAbsolute(rel));
};

/** The executables a spawn names, as given. */
export function namedExecutables(
  req: Pick<ResolvedSpawnRequest, 'runtime' | 'config' | 'env'>,
): Array<{ from: string; path: string }> {
  const out: Array<{ from: string; path: string }> = [];
  const config = req.config ?? {};
  if (COMMAND_RUNTIMES.has(req.runtime)) {
    const c = config.command;
    const first = Array.isArray(c) ? c[0] : typeof c === 'string' ? splitCommandLine(c)[0] : undefined;
    if (first !== undefined) out.push({ from: 'config.command', path: String(first) });
  }
  for (const key of CLI_CONFIG_KEYS) {
    const v = config[key];
    if (typeof v === 'string' && v.length > 0) out.push({ from: `config.${key}`, path: v });
  }
  for (const key of CLI_ENV_VARS) {
    const v = req.env?.[key];
    if (v) out.push({ from: `env.${key}`, path: v });
  }
  return out;
}

/** Where an executable really is: found as the runtime would find it, symlinks resolved. */
export function realExecutable(path: string): string {
  const found = resolveExecutable(path, process.env.PATH ?? '') ?? resolve(path);
  try {
    return realpathSync(found);
  } catch {
    return found;
  }
}

/** Executable patterns are absolute: a bare name would match a file the agent wrote itself. */
export function checkPatterns(patterns: readonly string[]): void {
  for (const p of patterns) {
    if (!p.startsWith('/'))
      throw invalid(`executable grant ${JSON.stringify(p)} must be an absolute path glob`);
    try {
      compileGlob(p);
    } catch (error) {
      if (error instanceof GlobTooLongError) throw invalid(`executable grant: ${error.message}`);
      throw error;
    }
  }
}

/** The grants stored on a row; rows from before grants were stored get their kind's defaults. */
export function grantsOfRow(row: SessionsTable): SpawnGrants {
  if (row.depth === 0) return UNRESTRICTED;
  const stored = parseJson<SpawnGrants | null>(row.spawn_grants ?? null, null);
  if (stored) return stored;
  const spec = parseJson<{ cwd?: string | null }>(row.spec, {});
  return {
    runtimes: [...(KIND_RUNTIMES[row.runtime] ?? [row.runtime, 'script'])],
    executables: [],
    cwd: [spec.cwd ?? process.cwd()],
    secrets: [],
  };
}

/** The working directory a child runs in: what it asked for, else its parent's. */
function childCwd(req: ResolvedSpawnRequest, parentCwd: string | null): string | null {
  return req.cwd ?? parentCwd;
}

/**
 * Check a spawn against the spawner's grants and work out the child's. Operators may spawn
 * anything; a session only what its grants hold, or the spawn is `forbidden` naming the
 * missing grant. The child gets what the spawn asked for (else its kind's defaults),
 * narrowed to the spawner's: never more than its parent. Returns the child's grants and the
 * working directory to record (canonical whenever the spawner is restricted).
 */
export function childGrants(
  spawner: Principal,
  parent: SessionsTable,
  req: ResolvedSpawnRequest,
): { grants: SpawnGrants; cwd: string | null } {
  const bound = spawner.kind === 'operator' ? UNRESTRICTED : grantsOfRow(parent);
  const parentCwd =
    spawner.kind === 'session' ? (parseJson<{ cwd?: string | null }>(parent.spec, {}).cwd ?? null) : null;
  const asked = req.grants ?? {};
  if (asked.executables) checkPatterns(asked.executables);

  if (bound.runtimes && !bound.runtimes.includes(req.runtime)) {
    throw forbiddenGrant(
      'runtimes',
      req.runtime,
      `spawning a ${JSON.stringify(req.runtime)} session is not granted`,
    );
  }
  const exes = namedExecutables(req).map((e) => ({ ...e, real: realExecutable(e.path) }));
  if (bound.executables) {
    for (const e of exes) {
      if (!bound.executables.some((p) => globMatch(p, e.real))) {
        throw forbiddenGrant(
          'executables',
          e.real,
          `running ${JSON.stringify(e.path)} (${e.from}) is not granted`,
        );
      }
    }
  }

  let cwd = childCwd(req, parentCwd);
  if (bound.cwd) {
    // Canonical before it is checked and recorded: neither `..` nor a symlink leads out.
    const real = canonical(cwd ?? process.cwd(), parentCwd ?? process.cwd(), 'cwd');
    if (!bound.cwd.some((root) => within(real, root))) {
      throw forbiddenGrant('cwd', real, `working in ${JSON.stringify(cwd ?? real)} is not granted`);
    }
    cwd = cwd === null ? null : real;
  }
  // A persona's roots bound where its own session works, whoever spawns it.
  if (req.cwdRoots) {
    const real = canonical(cwd ?? process.cwd(), parentCwd ?? process.cwd(), 'cwd');
    if (!req.cwdRoots.some((root) => within(real, canonicalRoot(root, '/')))) {
      throw new WarrenError(
        'forbidden',
        `working in ${JSON.stringify(real)} is outside its persona's roots (${req.cwdRoots.join(', ')})`,
        { grant: 'cwd', wanted: real },
      );
    }
    cwd = real;
  }

  // Warren's own variables name executables and credentials it sets itself.
  for (const variable of Object.keys(req.secretEnv ?? {})) {
    if (variable.startsWith('WARREN_')) throw invalid(`secretEnv may not set warren's own ${variable}`);
  }
  // What a session may set in a child's environment is an allowlist, checked by the spawn on
  // what the session itself asked for (src/kernel/spawn-env.ts); a persona's env is the operator's.
  const secretNames = Object.values(req.secretEnv ?? {});
  if (bound.secrets) {
    for (const name of secretNames) {
      if (!bound.secrets.includes(name))
        throw forbiddenGrant('secrets', name, `passing on secret ${JSON.stringify(name)} is not granted`);
    }
  }

  // Network is the child's own, like its cwd: asking for more than the spawner holds is refused.
  const network = asked.network ?? bound.network ?? null;
  if (network === 'full' && bound.network === 'none') {
    throw forbiddenGrant('network', 'full', 'full network access is not granted (it has network none)');
  }

  const ownExe = COMMAND_RUNTIMES.has(req.runtime) && req.runtime !== 'command' ? exes[0]?.real : undefined;
  const base = cwd ?? process.cwd();
  const requested: SpawnGrants = {
    runtimes: asked.runtimes ?? [...(KIND_RUNTIMES[req.runtime] ?? [req.runtime, 'script'])],
    executables: asked.executables ?? (ownExe ? [ownExe] : []),
    cwd: (asked.cwd ?? [base]).map((root) => canonicalRoot(root, base)),
    secrets: asked.secrets ?? [...new Set(secretNames)],
  };
  return { grants: { ...narrow(requested, bound), ...(network ? { network } : {}) }, cwd };
}

/** A root as a canonical path; one that does not exist (yet) is kept as resolved. */
export function canonicalRoot(root: string, base: string): string {
  try {
    return realpathSync(resolve(base, root));
  } catch {
    return resolve(base, root);
  }
}

/** `asked`, cut down to what `bound` holds. */
function narrow(asked: SpawnGrants, bound: SpawnGrants): SpawnGrants {
  return {
    runtimes: keep(asked.runtimes, bound.runtimes, (a, b) => a === b),
    // A pattern is kept when one of the bound's matches it with its `*`s read literally:
    // then everything it matches, the bound's pattern matches too.
    executables: keep(asked.executables, bound.executables, (a, b) => globMatch(b, a)),
    cwd: keep(asked.cwd, bound.cwd, (a, b) => within(a, b)),
    secrets: keep(asked.secrets, bound.secrets, (a, b) => a === b),
  };
}

export function keep(
  asked: string[] | null,
  bound: string[] | null,
  covered: (a: string, b: string) => boolean,
): string[] | null {
  if (bound === null) return asked;
  if (asked === null) return [...bound];
  return asked.filter((a) => bound.some((b) => covered(a, b)));
}
