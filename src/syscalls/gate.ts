import { isJwtPrincipal } from '../auth/jwt.ts';
import type { Syscall } from '../contract/syscall.ts';
import { type Tier, tierOf } from '../contract/tiers.ts';
import { compileGlob, GlobTooLongError } from '../util/glob.ts';
import { forbidden, invalid } from '../vocab/errors.ts';
import type { Principal } from '../vocab/principal.ts';
import type { SyscallTable } from './dispatch.ts';

/** Allow / deny rules on tool names; `*` matches any run of characters. Deny wins. */
export interface Grants {
  allow?: readonly string[];
  deny?: readonly string[];
}

export interface GatingPolicy {
  /** Replace a tier's default tool set (names of session-callable syscalls). */
  tiers?: Partial<Record<Tier, readonly string[]>>;
}

/** A grant pattern as a matcher that cannot backtrack (grants come from callers). */
const glob = (pattern: string) => {
  try {
    return { test: compileGlob(pattern) };
  } catch (error) {
    if (error instanceof GlobTooLongError) throw invalid(`grant pattern: ${error.message}`);
    throw error;
  }
};

/**
 * Who may call which tool. A session's set is fixed at spawn: its tier's defaults,
 * intersected with its parent's set, the spawn's allowlist and its grants. It is stored
 * with the session, so a child never holds more than its parent did.
 */
export class Gate {
  private readonly defaults: Record<Tier, readonly string[]>;

  constructor(
    private readonly table: SyscallTable,
    policy: GatingPolicy = {},
    /** Plugins whose syscalls a bearer JWT of an external issuer may call (Plugin.jwtCallers). */
    private readonly jwtPlugins: ReadonlySet<string> = new Set(),
  ) {
    const sessionCallable = [...table.values()].filter((s) => s.callers.includes('session'));
    const byTier = (t: number) => sessionCallable.filter((s) => (s.tier ?? 0) >= t).map((s) => s.name);
    this.defaults = {
      root: policy.tiers?.root ?? byTier(0),
      orchestrator: policy.tiers?.orchestrator ?? byTier(1),
      agent: policy.tiers?.agent ?? byTier(2),
      worker: policy.tiers?.worker ?? byTier(3),
    };
  }

  tierDefaults(depth: number): readonly string[] {
    return this.defaults[tierOf(depth)];
  }

  /** The tool set of a new session at `depth`. */
  forSpawn(
    depth: number,
    parentTools: readonly string[] | null,
    allowlist?: readonly string[],
    grants?: Grants,
  ): string[] {
    let tools = [...this.tierDefaults(depth)];
    if (parentTools) tools = tools.filter((t) => parentTools.includes(t));
    if (allowlist) tools = tools.filter((t) => allowlist.includes(t));
    if (grants?.allow) {
      const allow = grants.allow.map(glob);
      tools = tools.filter((t) => allow.some((r) => r.test(t)));
    }
    if (grants?.deny) {
      const deny = grants.deny.map(glob);
      tools = tools.filter((t) => !deny.some((r) => r.test(t)));
    }
    return tools;
  }

  /** Operators call what operators may; a session only what its set holds. */
  visible(principal: Principal): Syscall[] {
    return [...this.table.values()].filter((s) => this.allows(principal, s));
  }

  allows(principal: Principal, s: Syscall): boolean {
    if (!s.callers.includes(principal.kind)) return false;
    if (principal.kind === 'operator')
      return !isJwtPrincipal(principal) || this.jwtPlugins.has(s.plugin ?? '');
    return (principal.tools ?? this.tierDefaults(principal.depth)).includes(s.name);
  }

  /** Throw a clear `forbidden` unless the principal may call this syscall. */
  check(principal: Principal, s: Syscall): void {
    if (principal.kind === 'operator') {
      // An external issuer's token reaches only the plugins made for such callers.
      if (!this.allows(principal, s))
        throw forbidden(
          `a bearer JWT may call only the operations of ${[...this.jwtPlugins].join(', ') || 'no plugin'}, not ${s.name}`,
        );
      return;
    }
    if (!s.callers.includes('session')) throw forbidden(`${s.name} cannot be called by a session`);
    if (!this.allows(principal, s)) {
      throw forbidden(
        `${s.name} is not available to this session (tier ${tierOf(principal.depth)}); it may call: ${(principal.tools ?? this.tierDefaults(principal.depth)).join(', ') || 'nothing'}`,
      );
    }
  }
}
