import type { Plugin } from '../contract/plugin.ts';
import type {
  PromptSource,
  PromptText,
  ResourceInfo,
  ResourceProvider,
  ResourceTemplateInfo,
} from '../contract/resources.ts';
import type { SyscallContext } from '../contract/syscall.ts';
import type { Kernel } from '../kernel/kernel.ts';
import type { LogEvent } from '../store/events.ts';
import { WarrenError } from '../vocab/errors.ts';
import type { Principal } from '../vocab/principal.ts';
import type { SyscallTable } from './dispatch.ts';
import type { Gate } from './gate.ts';

/** What the door needs of the warren it serves, besides the loaded plugins. */
export interface DoorParts {
  table: SyscallTable;
  gate: Gate;
  kernel: Kernel;
  /** A caller as the gate must see it: a bare session principal gets its tool set. */
  resolve(principal: Principal): Promise<Principal>;
  /** A loaded plugin's instance (what its contributions get as `ctx.self`). */
  self(plugin: string): unknown;
  /** Call a syscall as `principal`, through dispatch. */
  call(principal: Principal, name: string, input: unknown): Promise<unknown>;
}

/**
 * What the loaded plugins contribute besides syscalls — completions, resources, prompts —
 * reached through the same door as a syscall: each rides on a syscall's right, and a caller
 * reaches it only when the gate lets that caller call the syscall.
 */
export class Contributions {
  constructor(
    private readonly plugins: readonly Plugin[],
    private readonly parts: DoorParts,
  ) {}

  private may(who: Principal, syscall: string): boolean {
    const s = this.parts.table.get(syscall);
    return s !== undefined && this.parts.gate.allows(who, s);
  }

  private ctx(who: Principal, plugin: string): SyscallContext {
    return { principal: who, kernel: this.parts.kernel, self: this.parts.self(plugin) };
  }

  /**
   * Values of one kind of name (`sessions`, `tasks`, …) that start with `prefix`, among those
   * the caller may see, from every loaded plugin that completes that kind.
   */
  async complete(principal: Principal, kind: string, prefix: string, limit: number): Promise<string[]> {
    const who = await this.parts.resolve(principal);
    const values: string[] = [];
    for (const plugin of this.plugins) {
      for (const c of plugin.completions ?? []) {
        if (c.kind !== kind || !this.may(who, c.via)) continue;
        values.push(...(await c.values(this.ctx(who, plugin.name), prefix, limit - values.length)));
        if (values.length >= limit) return values;
      }
    }
    return values;
  }

  // ---------------------------------------------------------------- resources

  private providers(): Array<{ plugin: string; provider: ResourceProvider }> {
    return this.plugins.flatMap((p) => (p.resources ? [{ plugin: p.name, provider: p.resources }] : []));
  }

  templates(): ResourceTemplateInfo[] {
    return this.providers().flatMap(({ provider }) => [...provider.templates]);
  }

  /**
   * One page of the resources the caller may read: each provider's pages in turn, the
   * cursor naming the provider it continues (`<plugin>:<its cursor>`).
   */
  async list(
    principal: Principal,
    cursor: string | undefined,
  ): Promise<{ resources: ResourceInfo[]; next?: string }> {
    const who = await this.parts.resolve(principal);
    const all = this.providers();
    let at = 0;
    let inner: string | undefined;
    if (cursor !== undefined) {
      const cut = cursor.indexOf(':');
      at = all.findIndex((p) => p.plugin === cursor.slice(0, cut));
      if (cut < 0 || at < 0) throw new WarrenError('invalid_input', 'Invalid cursor');
      inner = cursor.slice(cut + 1);
    }
    const resources: ResourceInfo[] = [];
    for (; at < all.length; at++, inner = undefined) {
      const { plugin, provider } = all[at]!;
      const ctx = { ...this.ctx(who, plugin), mayCall: (s: string) => this.may(who, s) };
      const page = await provider.list(ctx, inner);
      resources.push(...page.resources);
      if (page.next !== undefined) return { resources, next: `${plugin}:${page.next}` };
    }
    return { resources };
  }

  /** The provider of `uri` and what it names, after the gate's check; null when no plugin's. */
  private async open(principal: Principal, uri: string) {
    const found = this.providers().find(({ provider }) => uri.startsWith(provider.scheme));
    if (!found) return null;
    const who = await this.parts.resolve(principal);
    const handle = found.provider.open(uri, who);
    if (!this.may(who, handle.via))
      throw new WarrenError(
        'forbidden',
        `reading ${uri} needs the tool ${handle.via}, which you may not call`,
        {
          uri,
        },
      );
    return { handle, ctx: this.ctx(who, found.plugin) };
  }

  /** A resource's content; null when no loaded plugin answers its URI. */
  async read(principal: Principal, uri: string): Promise<{ mimeType: string; text: string } | null> {
    const opened = await this.open(principal, uri);
    return opened ? opened.handle.read(opened.ctx) : null;
  }

  /** The key a subscription to `uri` watches (null: no plugin's URI, it never changes). */
  async watch(principal: Principal, uri: string): Promise<string | null> {
    const opened = await this.open(principal, uri);
    return opened ? opened.handle.watch(opened.ctx) : null;
  }

  /** The keys a committed event changes, for every provider. */
  touches(event: LogEvent): string[] {
    return this.providers().flatMap(({ provider }) => [...provider.touches(event)]);
  }

  // ---------------------------------------------------------------- prompts

  private promptSources(): PromptSource[] {
    return this.plugins.flatMap((p) => [...(p.prompts ?? [])]);
  }

  private visible(who: Principal): { tools: Set<string>; prompts: PromptSource[] } {
    const tools = new Set(this.parts.gate.visible(who).map((s) => s.name));
    const prompts = this.promptSources().filter(
      (d) => (!d.callers || d.callers === who.kind) && d.requires.every((t) => tools.has(t)),
    );
    return { tools, prompts };
  }

  /** The prompts the caller may use. */
  async prompts(principal: Principal): Promise<PromptSource[]> {
    return this.visible(await this.parts.resolve(principal)).prompts;
  }

  /** A prompt the caller may use, rendered with syscalls called as the caller; null when none. */
  async render(
    principal: Principal,
    name: string,
    args: Record<string, string>,
  ): Promise<{ source: PromptSource; messages: PromptText[] } | null> {
    const who = await this.parts.resolve(principal);
    const { tools, prompts } = this.visible(who);
    const source = prompts.find((d) => d.name === name);
    if (!source) return null;
    const call = (syscall: string, input: unknown) => this.parts.call(who, syscall, input);
    return { source, messages: await source.render({ principal: who, tools, call }, args) };
  }

  /** The completion kind of a prompt's argument, if it has one. */
  promptArgKind(prompt: string, arg: string): string | undefined {
    return this.promptSources()
      .find((d) => d.name === prompt)
      ?.arguments.find((a) => a.name === arg)?.complete;
  }
}
