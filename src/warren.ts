import { join } from 'node:path';
import type { KernelConfig } from './kernel/config.ts';
import { Kernel } from './kernel/kernel.ts';
import type { Principal } from './kernel/principal.ts';
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
  runtimes?: Runtime[];
  clock?: Clock;
  ids?: IdGenerator;
}

/** One warren: a store, a kernel over it and the syscall table every surface calls. */
export class Warren {
  private constructor(
    readonly store: Store,
    readonly kernel: Kernel,
    readonly table: SyscallTable,
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
    const kernel = new Kernel({
      store,
      runtimes: builtinRuntimes(opts.runtimes),
      clock,
      ids,
      ...(opts.kernel ? { config: opts.kernel } : {}),
    });
    const table = syscallTable();
    const warren = new Warren(store, kernel, table);
    kernel.setInvoker((principal, name, input) => warren.call(principal, name, input));
    try {
      await kernel.start();
    } catch (error) {
      await store.close();
      throw error;
    }
    return warren;
  }

  /** Call a syscall: the path every surface takes. */
  call(
    principal: Principal,
    name: string,
    input: unknown,
    extra: Pick<SyscallContext, 'signal' | 'progress'> = {},
  ): Promise<unknown> {
    return dispatch(this.table, { principal, kernel: this.kernel, ...extra }, name, input);
  }

  async close(): Promise<void> {
    await this.kernel.shutdown();
    await this.store.close();
  }
}
