import { dirname, join } from 'node:path';
import { Gate, type GatingPolicy } from './auth/gating.ts';
import type { KernelConfig } from './kernel/config.ts';
import { notFound } from './kernel/errors.ts';
import { Kernel } from './kernel/kernel.ts';
import type { Principal } from './kernel/principal.ts';
import { loadSecretsKey } from './kernel/secrets-key.ts';
import { builtinRuntimes } from './runtimes/registry.ts';
import type { Runtime } from './runtimes/types.ts';
import type { Durability } from './store/dialect.ts';
import { Store } from './store/store.ts';
import { dispatch, type SyscallTable } from './syscalls/dispatch.ts';
import { syscallTable } from './syscalls/table.ts';
import type { SyscallContext } from './syscalls/types.ts';
import { type Clock, systemClock } from './util/clock.ts';
import { createIds, type IdGenerator } from './util/ids.ts';

export interface WarrenOptions {
  /** A SQLite file or a postgres:// URL; default `<dataDir>/warren.db`. */
  db?: string;
  dataDir?: string;
  durability?: Durability;
  /** PostgreSQL schema (tests). */
  schema?: string;
  kernel?: Partial<KernelConfig>;
  /** Do not resume sessions yet (a server calls `kernel.resumeLost()` once it listens). */
  deferResume?: boolean;
  runtimes?: Runtime[];
  /** Override the default tool sets of the depth tiers. */
  gating?: GatingPolicy;
  clock?: Clock;
  ids?: IdGenerator;
}

/** One warren: a store, a kernel over it and the syscall table every surface calls. */
export class Warren {
  private constructor(
    readonly store: Store,
    readonly kernel: Kernel,
    readonly table: SyscallTable,
    readonly gate: Gate,
  ) {}

  static async open(opts: WarrenOptions = {}): Promise<Warren> {
    const clock = opts.clock ?? systemClock;
    const ids = opts.ids ?? createIds(clock);
    const url = opts.db ?? join(opts.dataDir ?? '.warren', 'warren.db');
    const store = await Store.open(
      { url, durability: opts.durability ?? 'process', ...(opts.schema ? { schema: opts.schema } : {}) },
      clock,
      ids,
    );
    let secretsKey: Uint8Array;
    try {
      secretsKey = await loadSecretsKey(store, keyDir(opts, url));
    } catch (error) {
      await store.close();
      throw error;
    }
    const table = syscallTable();
    const gate = new Gate(table, opts.gating);
    const kernel = new Kernel({
      store,
      runtimes: builtinRuntimes(opts.runtimes),
      clock,
      ids,
      toolPolicy: (depth, parentTools, allowlist, grants) =>
        gate.forSpawn(depth, parentTools, allowlist, grants),
      toolsOf: (row) => toolsOfRow(gate, row.tools, row.depth),
      secretsKey,
      ...(opts.kernel ? { config: opts.kernel } : {}),
    });
    const warren = new Warren(store, kernel, table, gate);
    kernel.setInvoker((principal, name, input) => warren.call(principal, name, input));
    try {
      await kernel.start({ deferResume: opts.deferResume ?? false });
    } catch (error) {
      await store.close();
      throw error;
    }
    return warren;
  }

  /** Call a syscall: the path every surface takes. Sessions are gated to their tools. */
  async call(
    principal: Principal,
    name: string,
    input: unknown,
    extra: Pick<SyscallContext, 'signal' | 'progress'> = {},
  ): Promise<unknown> {
    const syscall = this.table.get(name);
    if (!syscall) throw notFound('syscall', name);
    const who =
      principal.kind === 'session' && !principal.tools ? await this.withTools(principal) : principal;
    this.gate.check(who, syscall, input);
    return dispatch(this.table, { principal: who, kernel: this.kernel, ...extra }, name, input);
  }

  /** A session principal with its tool set, read from its row. */
  async withTools(principal: Extract<Principal, { kind: 'session' }>): Promise<Principal> {
    const row = await this.store.reader
      .selectFrom('sessions')
      .select(['tools', 'depth'])
      .where('id', '=', principal.sessionId)
      .executeTakeFirst();
    return { ...principal, tools: toolsOfRow(this.gate, row?.tools ?? null, row?.depth ?? principal.depth) };
  }

  async close(): Promise<void> {
    await this.kernel.shutdown();
    await this.store.close();
  }
}

const toolsOfRow = (gate: Gate, tools: string | null, depth: number): readonly string[] =>
  tools === null ? gate.tierDefaults(depth) : (JSON.parse(tools) as string[]);

/** Where key files live: the data dir, else beside the database file; none for a memory one. */
function keyDir(opts: WarrenOptions, url: string): string | null {
  if (opts.dataDir) return opts.dataDir;
  if (url === ':memory:' || url.startsWith('file::memory:')) return null;
  return dirname(url);
}
