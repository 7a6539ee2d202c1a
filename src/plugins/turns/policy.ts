import { realpathSync } from 'node:fs';
import { isAbsolute, relative, sep } from 'node:path';
import { forbidden, invalid } from '../../vocab/errors.ts';
import type { MutationClass, Policy } from './config.ts';

/**
 * The fail-closed rules of the bridge, in one place: every mutating syscall checks both the
 * startup opt-in (its class is enabled) and the per-call consent (`allow_mutation: true`).
 */
export function requireMutation(policy: Policy, cls: MutationClass, allow: boolean | undefined): void {
  if (!policy.mutations.includes(cls)) {
    throw forbidden(
      `mutation class "${cls}" is not enabled: the bridge is read-only unless started with it (plugins.settings.turns.mutations, SKC_COORDINATOR_MCP_MUTATIONS)`,
    );
  }
  if (allow !== true) throw forbidden(`this call mutates ("${cls}"): pass allow_mutation: true to consent`);
}

/** Ids that reach a path or a query: a prefix, an underscore, a lowercase ULID-like tail. */
const SAFE_ID = /^[a-z]{2,8}_[0-9a-z]{10,40}$/;

export function requireSafeId(what: string, id: string): string {
  if (!SAFE_ID.test(id)) throw invalid(`${what} ${JSON.stringify(id.slice(0, 80))} is not a valid id`);
  return id;
}

/** Whether `path` (canonical) is `root` or below it. */
export const isInside = (root: string, path: string): boolean => {
  const rel = relative(root, path);
  return rel === '' || (!rel.startsWith(`..${sep}`) && rel !== '..' && !isAbsolute(rel));
};

/**
 * A working directory the allowlist admits, canonicalised (symlinks resolved): the roots are
 * required, and a path that resolves outside every root is refused whatever it looks like.
 */
export function allowedWorkdir(policy: Policy, dir: string): string {
  if (policy.workdirRoots.length === 0) {
    throw forbidden(
      'no working-directory roots are configured: starting or registering a session needs an allowlist (plugins.settings.turns.workdirRoots, SKC_COORDINATOR_MCP_WORKDIR_ROOTS)',
    );
  }
  if (!isAbsolute(dir)) throw invalid(`working directory must be an absolute path: ${dir}`);
  let real: string;
  try {
    real = realpathSync(dir);
  } catch {
    throw invalid(`working directory does not exist: ${dir}`);
  }
  for (const root of policy.workdirRoots) {
    let r: string;
    try {
      r = realpathSync(root);
    } catch {
      continue;
    }
    if (isInside(r, real)) return real;
  }
  throw forbidden(`working directory ${dir} is outside the allowed roots`);
}

/**
 * The namespace a call works in: the one given, else the policy's; never "every namespace".
 * A namespace the server is pinned to cannot be swapped for another by the caller.
 */
export function namespaceOf(policy: Policy, given?: { profile?: string; repo?: string }) {
  const pick = (what: 'profile' | 'repo') => {
    const g = given?.[what];
    if (g !== undefined && policy[what] !== '' && g !== policy[what]) {
      throw forbidden(`this bridge is scoped to ${what} "${policy[what]}"`);
    }
    return g ?? policy[what];
  };
  return { profile: pick('profile'), repo: pick('repo') };
}
