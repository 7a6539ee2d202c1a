import type { Runtime, RuntimeRegistry } from '../runtimes/types.ts';
import { WarrenError } from '../vocab/errors.ts';

/** Where an agent process runs: `local` (this node) or `<kind>:<name>` (e.g. `runner:gpu1`). */
export const LOCAL_ENVIRONMENT = 'local';

/**
 * Environments of one kind (`runner`): a plugin that can run agents elsewhere provides one.
 * The runtime it hands back is the same contract as a local one (validate, start → handle),
 * so the supervisor, delivery and the reports path do not know where the process runs.
 */
export interface EnvironmentProvider {
  /**
   * The runtime `name` as `environment` runs it. Throws a typed error when the environment is
   * unknown (`not_found`), offline (`unavailable`) or does not offer the runtime.
   */
  runtime(environment: string, name: string): Runtime;
  /** Whether it can start agents right now (a resume waits for it otherwise). */
  online(environment: string): boolean;
  /** Whether it exists at all (online or not): what a task or persona may name. */
  exists(environment: string): boolean;
  /** The environments it can start agents in right now (a cluster records them per node). */
  onlineEnvironments?(): string[];
}

/** This node's runtimes plus the providers of other environments, by kind. */
export class Environments {
  private readonly providers = new Map<string, EnvironmentProvider>();

  constructor(private readonly local: RuntimeRegistry) {}

  /** A plugin registers the kind of environment it serves (once per kind). */
  provide(kind: string, provider: EnvironmentProvider): void {
    if (kind === LOCAL_ENVIRONMENT || this.providers.has(kind))
      throw new Error(`environment kind ${kind} is already provided`);
    this.providers.set(kind, provider);
  }

  /** A local runtime by name (personas and validation of local spawns). */
  localRuntime(name: string): Runtime {
    const rt = this.local.get(name);
    if (!rt) {
      throw new WarrenError(
        'runtime_unavailable',
        `unknown runtime ${JSON.stringify(name)}; known: ${[...this.local.keys()].join(', ')}`,
        { runtime: name },
      );
    }
    return rt;
  }

  /** The runtime that starts `name` in `environment`; a typed error when it cannot be had. */
  runtime(environment: string, name: string): Runtime {
    if (environment === LOCAL_ENVIRONMENT) return this.localRuntime(name);
    return this.provider(environment).runtime(environment, name);
  }

  /** Every environment other than `local` that can start agents here now. */
  onlineEnvironments(): string[] {
    return [...this.providers.values()].flatMap((p) => p.onlineEnvironments?.() ?? []);
  }

  online(environment: string): boolean {
    if (environment === LOCAL_ENVIRONMENT) return true;
    const kind = environment.split(':', 1)[0] ?? '';
    const p = this.providers.get(kind);
    return p !== undefined && environment.length > kind.length + 1 && p.online(environment);
  }

  /** A typed `not_found` unless `environment` exists (it may be offline: tasks wait for it). */
  check(environment: string): void {
    if (environment === LOCAL_ENVIRONMENT) return;
    const p = this.provider(environment);
    if (!p.exists(environment)) {
      throw new WarrenError('not_found', `environment ${JSON.stringify(environment)} does not exist`, {
        what: 'environment',
        id: environment,
      });
    }
  }

  private provider(environment: string): EnvironmentProvider {
    const kind = environment.split(':', 1)[0] ?? '';
    const p = environment.includes(':') ? this.providers.get(kind) : undefined;
    if (!p) {
      const kinds = [...this.providers.keys()].map((k) => `${k}:<name>`);
      throw new WarrenError(
        'not_found',
        `environment ${JSON.stringify(environment)} does not exist; environments are ${[LOCAL_ENVIRONMENT, ...kinds].join(' or ')}`,
        { what: 'environment', id: environment },
      );
    }
    return p;
  }
}
