import type { Kysely } from 'kysely';
import type {
  Plugin,
  PluginContext,
  PluginDirectory,
  PluginInstance,
  PluginListing,
  PluginTables,
  PluginTx,
  StartContextPart,
  StartContextTask,
  Target,
} from '../contract/plugin.ts';
import type { Syscall } from '../contract/syscall.ts';
import type { Kernel } from '../kernel/kernel.ts';
import type { LogEvent } from '../store/events.ts';
import type { Store } from '../store/store.ts';
import { type Log, stderrLog } from '../util/log.ts';
import { WarrenError } from '../vocab/errors.ts';
import type { Principal } from '../vocab/principal.ts';
import { inputError, type SyscallTable, tableOf } from './dispatch.ts';
import { readEnablement, recordLoaded } from './enablement.ts';
import { listPlugins, togglePlugin } from './manage.ts';
import { loadOrder } from './order.ts';

/** What a host needs to know before the kernel exists: which plugins, with which config. */
export interface PluginSelection {
  /** Every plugin this build knows (core first). */
  known: readonly Plugin[];
  /** Seeds the `plugins` rows of a fresh database (WARREN_PLUGINS); ignored after. */
  seed?: readonly string[];
  /** Each plugin's settings, by name (the config file's `plugins.<name>`). */
  config?: Readonly<Record<string, unknown>>;
}

/**
 * A plugin's handle on its own tables: the store's reader and writer, typed to the plugin's
 * tables only (each plugin's schema.ts names them), so a plugin names no table of another.
 */
function tablesOf<DB>(store: Store): PluginTables<DB> {
  return {
    kind: store.kind,
    reader: store.reader as unknown as Kysely<DB>,
    heavyReader: store.heavyReader as unknown as Kysely<DB>,
    write: (fn, opts) => store.writer.write((tx) => fn(tx as unknown as PluginTx<DB>), opts),
  };
}

/** The syscalls of every plugin in `plugins`, each marked with its plugin. */
export function syscallsOf(plugins: readonly Plugin[]): Syscall[] {
  return plugins.flatMap((p) => (p.syscalls ?? []).map((s) => ({ ...s, plugin: p.name }) as Syscall));
}

/**
 * The loaded plugins of one warren: brought up in dependency order after the kernel, torn
 * down in reverse. Holds their instances (what syscalls reach them through) and resolves
 * the ids they give meaning to.
 */
export class PluginHost implements PluginDirectory {
  private readonly instances = new Map<string, PluginInstance>();
  private readonly unsubscribe: Array<() => void> = [];
  private started: Plugin[] = [];
  private log: Log = stderrLog;

  private constructor(
    readonly known: readonly Plugin[],
    /** In load order. */
    readonly loaded: readonly Plugin[],
    private readonly configs: ReadonlyMap<string, unknown>,
    /** Syscalls of known plugins that are not loaded (each marked with its plugin). */
    readonly unloaded: readonly Syscall[],
    readonly table: SyscallTable,
    private readonly store: Store,
  ) {
    this.absent = new Map(unloaded.map((s) => [s.name, s.plugin ?? '']));
    this.loadedNames = loaded.map((p) => p.name);
  }

  readonly loadedNames: readonly string[];

  /** Syscall name → the plugin it belongs to, for syscalls this server does not load. */
  readonly absent: ReadonlyMap<string, string>;

  /**
   * Decide what loads (the database says), check each plugin's config, and bring each
   * loaded plugin's tables up to date. Throws a clear error on a cycle, a missing
   * dependency, an unknown name or bad config: a server must not start half-assembled.
   */
  static async prepare(store: Store, sel: PluginSelection): Promise<PluginHost> {
    const enabled = await readEnablement(store, sel.known, sel.seed);
    const loaded = loadOrder(sel.known, enabled);
    const configs = new Map<string, unknown>();
    for (const name of Object.keys(sel.config ?? {})) {
      if (!sel.known.some((p) => p.name === name)) {
        throw new WarrenError('invalid_input', `plugins.${name}: no plugin of that name`);
      }
    }
    for (const p of loaded) {
      const raw = sel.config?.[p.name] ?? {};
      if (!p.config) {
        configs.set(p.name, raw);
        continue;
      }
      const parsed = p.config.safeParse(raw);
      if (!parsed.success) throw inputError(`plugins.${p.name}`, parsed.error);
      configs.set(p.name, parsed.data);
    }
    for (const p of loaded) {
      if (p.migrations) await store.migratePlugin(p.name, p.migrations(store.kind));
    }
    await recordLoaded(store, loaded);
    const unloaded = syscallsOf(sel.known.filter((p) => !loaded.includes(p)));
    return new PluginHost(sel.known, loaded, configs, unloaded, tableOf(syscallsOf(loaded)), store);
  }

  /** Start each plugin, in order; its phases join the reconcile loop, its subscriber the commit path. */
  async start(
    kernel: Kernel,
    store: Store,
    call: (p: Principal, name: string, input: unknown) => Promise<unknown>,
    shared: Partial<Pick<PluginContext, 'metrics' | 'log' | 'dataDir'>> = {},
  ) {
    const log = shared.log ?? stderrLog;
    this.log = log;
    for (const p of this.loaded) {
      if (!p.start) continue;
      const instance = await p.start({
        kernel,
        tables: tablesOf(store),
        config: this.configs.get(p.name),
        call,
        metrics: shared.metrics ?? null,
        log,
        dataDir: shared.dataDir ?? null,
        startContext: (task) => this.startContext(task),
        directory: this,
        plugin: <T>(name: string) => {
          if (!(p.dependsOn ?? []).includes(name)) {
            throw new Error(`plugin ${p.name} reaches ${name} without depending on it`);
          }
          return this.get<T>(name);
        },
      });
      this.instances.set(p.name, instance);
      this.started.push(p);
      for (const phase of instance.phases ?? []) {
        kernel.addReconcilePhase({
          name: `${p.name}:${phase.name}`,
          run: () => phase.run(),
          scope: phase.scope ?? 'node',
          ...(phase.seed ? { seed: phase.seed } : {}),
        });
      }
      const guarded = (listener: (events: readonly LogEvent[]) => void) => (events: readonly LogEvent[]) => {
        try {
          listener(events);
        } catch (error) {
          log.error({ plugin: p.name, err: error }, `plugin ${p.name} subscriber failed`);
        }
      };
      if (instance.onCommit)
        this.unsubscribe.push(store.writer.onCommit(guarded(instance.onCommit.bind(instance))));
      if (instance.onAnyCommit)
        this.unsubscribe.push(store.writer.onAnyCommit(guarded(instance.onAnyCommit.bind(instance))));
    }
  }

  /** A loaded plugin's instance; `unavailable` when it is not loaded here. */
  get<T = PluginInstance>(name: string): T {
    const instance = this.instances.get(name);
    if (!instance) {
      throw new WarrenError(
        'unavailable',
        `the ${name} plugin is not loaded (warren plugin enable ${name}; restart)`,
      );
    }
    return instance as T;
  }

  /** Every loaded plugin's start context for `task`, in load order (plugins.md, start context). */
  async startContext(task: StartContextTask): Promise<StartContextPart[]> {
    const parts: StartContextPart[] = [];
    for (const [plugin, instance] of this.instances) {
      if (!instance.startContext) continue;
      try {
        const part = await instance.startContext(task);
        if (part?.text) parts.push({ text: part.text, ref: { plugin, ...part.ref } });
      } catch (error) {
        // A session starts without a contribution rather than not at all.
        this.log.error({ plugin, err: error, task: task.id }, `plugin ${plugin}: start context failed`);
      }
    }
    return parts;
  }

  /** A loaded plugin's instance, or undefined: what its syscalls get as `ctx.self`. */
  instance(name: string): PluginInstance | undefined {
    return this.instances.get(name);
  }

  list(): Promise<PluginListing[]> {
    return listPlugins(this.store, this);
  }

  toggle(name: string, enabled: boolean, by: string, opts: { withDependents?: boolean } = {}) {
    return togglePlugin(this.store, this, name, enabled, by, opts);
  }

  /** The loaded plugins' instances, in load order. */
  instancesInOrder(): PluginInstance[] {
    return [...this.instances.values()];
  }

  has(name: string): boolean {
    return this.instances.has(name);
  }

  /**
   * The session an id names: a session id as it is, or an id a plugin gives meaning to (a
   * task id names its latest live session). `not_found` when it names nothing live.
   */
  async resolveSession(zone: string, id: string): Promise<string> {
    const target = await this.target(zone, id);
    if (target?.session === null) throw new WarrenError('not_found', `${id} has no live session`, { id });
    return target ? target.session : id;
  }

  /**
   * The plugin that gives `id` meaning, the session it stands for now (null: none live)
   * and its durable attachments, if it keeps any; undefined when no plugin claims `id`
   * (it is a session id, or nothing).
   */
  async target(zone: string, id: string): Promise<Target | undefined> {
    for (const [plugin, instance] of this.instances) {
      const found = await instance.targets?.resolve(zone, id);
      if (found === undefined) continue;
      return {
        plugin,
        session: found,
        ...(instance.targets?.durable ? { durable: instance.targets.durable } : {}),
      };
    }
    return undefined;
  }

  /**
   * Why `id` cannot keep a durable attachment, for the error: what ids the loaded plugins
   * keep them for, or which plugin to enable when none loaded does.
   */
  notDurable(id: string): string {
    const keeps = (p: Plugin) => p.sessionTargets !== undefined;
    const loaded = this.loaded.filter((p) => keeps(p) && this.instances.get(p.name)?.targets?.durable);
    if (loaded.length > 0) {
      return `--durable needs ${loaded.map((p) => p.sessionTargets).join(' or ')}; ${id} is not one (a session's attachments end with it)`;
    }
    const absent = this.known.filter((p) => keeps(p) && !this.loaded.includes(p));
    const how = absent
      .map(
        (p) =>
          `the ${p.name} plugin keeps them for ${p.sessionTargets} (warren plugin enable ${p.name}, then restart)`,
      )
      .join('; ');
    return `--durable needs an id a plugin keeps attachments for, and no loaded plugin keeps any${how ? `: ${how}` : ''}`;
  }

  /** Tear down in reverse load order. */
  async stop(): Promise<void> {
    for (const u of this.unsubscribe.splice(0)) u();
    for (const p of this.started.splice(0).reverse()) {
      try {
        await this.instances.get(p.name)?.stop?.();
      } catch (error) {
        this.log.error({ plugin: p.name, err: error }, `plugin ${p.name} failed to stop`);
      }
    }
    this.instances.clear();
  }
}
