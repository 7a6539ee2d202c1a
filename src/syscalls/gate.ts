import { isJwtPrincipal } from '../auth/jwt.ts';
import { DEFAULT_SESSION_JOB, JOBS, type Job, SESSION_JOBS } from '../contract/jobs.ts';
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
  /**
   * The depth-tier policy, by name (seed 002's shape: root 0, orchestrator 1, agent 2,
   * worker 3+): a tier given here replaces the job defaults of every session at its depth.
   * Unset tiers leave sessions to their jobs.
   */
  tiers?: Partial<Record<Tier, readonly string[]>>;
  /** Replace a job's default tool set (names of syscalls its callers may call). */
  jobs?: Partial<Record<Job, readonly string[]>>;
  /** Rules every session's set is narrowed by (the config's `grants.allow` / `grants.deny`). */
  grants?: Grants;
}

/** What a new session's default set is made from: its depth, its job and the groups asked for. */
export interface ToolSpec {
  depth: number;
  job?: string | undefined;
  groups?: readonly string[] | undefined;
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

const narrow = (tools: string[], grants: Grants | undefined): string[] => {
  let out = tools;
  if (grants?.allow) {
    const allow = grants.allow.map(glob);
    out = out.filter((t) => allow.some((r) => r.test(t)));
  }
  if (grants?.deny) {
    const deny = grants.deny.map(glob);
    out = out.filter((t) => !deny.some((r) => r.test(t)));
  }
  return out;
};

/**
 * Who may call which tool. A session's set is fixed at spawn: its job's defaults (or its
 * depth tier's, where the depth-tier policy is configured) and the tool groups its spawn,
 * persona or task named, intersected with its parent's set, the allowlists and the grants.
 * It is stored with the session, so a child never holds more than its parent did. An
 * operator may call every operator syscall; its MCP list shows its job's, plus the groups
 * its connection turned on.
 */
export class Gate {
  private readonly jobs: Record<Job, readonly string[]>;
  /** Group -> its listed syscalls, in table order. */
  private readonly byGroup = new Map<string, Syscall[]>();
  private readonly sessionTools: readonly string[];

  constructor(
    private readonly table: SyscallTable,
    private readonly policy: GatingPolicy = {},
    /** Plugins whose syscalls a bearer JWT of an external issuer may call (Plugin.jwtCallers). */
    private readonly jwtPlugins: ReadonlySet<string> = new Set(),
  ) {
    const all = [...table.values()];
    this.sessionTools = all.filter((s) => s.callers.includes('session')).map((s) => s.name);
    const ofJob = (job: Job) =>
      all
        .filter(
          (s) => s.jobs?.includes(job) && s.callers.includes(job === 'operator' ? 'operator' : 'session'),
        )
        .map((s) => s.name);
    this.jobs = Object.fromEntries(JOBS.map((j) => [j, policy.jobs?.[j] ?? ofJob(j)])) as Record<
      Job,
      readonly string[]
    >;
    for (const s of all) {
      if (s.listed === false) continue;
      const g = this.byGroup.get(s.group) ?? [];
      g.push(s);
      this.byGroup.set(s.group, g);
    }
  }

  /** The tool groups (a syscall's `group`), with their listed syscalls, in table order. */
  groups(): ReadonlyMap<string, readonly Syscall[]> {
    return this.byGroup;
  }

  jobDefaults(job: Job): readonly string[] {
    return this.jobs[job];
  }

  /** The default set of a session at this depth with this job, before parents and grants. */
  private base(spec: ToolSpec): string[] {
    if (spec.depth <= 0) return [...this.sessionTools];
    const tier = this.policy.tiers?.[tierOf(spec.depth)];
    const job = spec.job ?? DEFAULT_SESSION_JOB;
    if (!(SESSION_JOBS as readonly string[]).includes(job))
      throw invalid(`job ${JSON.stringify(job)}: a session's job is one of ${SESSION_JOBS.join(', ')}`, {
        field: 'job',
      });
    const out = new Set(tier ?? this.jobs[job as Job]);
    for (const g of spec.groups ?? []) {
      const members = this.byGroup.get(g);
      if (!members)
        throw invalid(
          `tool group ${JSON.stringify(g)}: the groups are ${[...this.byGroup.keys()].join(', ')}`,
          {
            field: 'toolGroups',
          },
        );
      for (const s of members) if (s.callers.includes('session')) out.add(s.name);
    }
    return this.sessionTools.filter((t) => out.has(t));
  }

  /** A session's set when none was stored (init; a row from before sets were stored). */
  defaultsFor(depth: number): readonly string[] {
    return narrow(this.base({ depth }), this.policy.grants);
  }

  /** The tool set of a new session. */
  forSpawn(
    spec: ToolSpec,
    parentTools: readonly string[] | null,
    allowlist?: readonly string[],
    grants?: Grants,
  ): string[] {
    let tools = narrow(this.base(spec), this.policy.grants);
    if (parentTools) tools = tools.filter((t) => parentTools.includes(t));
    if (allowlist) tools = tools.filter((t) => allowlist.includes(t));
    return narrow(tools, grants);
  }

  /** Everything this principal may call (prompts and completion follow this). */
  visible(principal: Principal): Syscall[] {
    return [...this.table.values()].filter((s) => this.allows(principal, s));
  }

  /**
   * What an MCP list shows this principal: a session its whole set; an operator its job's
   * default and the groups its connection turned on (`all`: every group). Aliases kept for
   * another surface (`listed: false`) are never shown.
   */
  listed(principal: Principal, enabled: ReadonlySet<string> | 'all' = new Set()): Syscall[] {
    return this.visible(principal).filter(
      (s) =>
        s.listed !== false &&
        (principal.kind === 'session' ||
          enabled === 'all' ||
          enabled.has(s.group) ||
          this.jobs.operator.includes(s.name)),
    );
  }

  allows(principal: Principal, s: Syscall): boolean {
    if (!s.callers.includes(principal.kind)) return false;
    if (principal.kind === 'operator')
      return !isJwtPrincipal(principal) || this.jwtPlugins.has(s.plugin ?? '');
    return (principal.tools ?? this.defaultsFor(principal.depth)).includes(s.name);
  }

  /**
   * The depth-tier policy's one rule on input: where the worker tier is configured, a session
   * of it (depth 3 and deeper) writes only to its own pipe, fd 1. Jobs have no such rule: fd
   * permissions bound what a session writes.
   */
  guard(principal: Principal, name: string, input: unknown): void {
    if (name !== 'ipc_write' || principal.kind !== 'session' || !this.policy.tiers?.worker) return;
    if (tierOf(principal.depth) === 'worker' && (input as { fd?: number }).fd !== 1)
      throw forbidden('a worker writes only to its own pipe (fd 1)');
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
        `${s.name} is not in this session's tool set (group ${s.group}: a spawn, persona or task names the groups a session gets, in toolGroups); it may call: ${(principal.tools ?? this.defaultsFor(principal.depth)).join(', ') || 'nothing'}`,
      );
    }
  }
}
