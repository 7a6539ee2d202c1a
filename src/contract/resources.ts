import type { LogEvent } from '../store/events.ts';
import type { Principal } from '../vocab/principal.ts';
import type { SyscallContext } from './syscall.ts';

/**
 * What a plugin offers MCP clients besides tools: resources to read and watch, and prompts.
 * Each rides on a syscall's right (`via`): the door lets a caller reach it only when the gate
 * lets that caller call the syscall, so no surface keeps a permission model of its own.
 */

/** A resource template (MCP `resources/templates/list`). */
export interface ResourceTemplateInfo {
  uriTemplate: string;
  name: string;
  title: string;
  description: string;
  mimeType: string;
}

/** One readable resource in a listing (MCP `resources/list`). */
export interface ResourceInfo {
  uri: string;
  name: string;
  title: string;
  description: string;
  mimeType: string;
}

/** A resource a URI names, before it is read: what guards it, how to read it, what changes it. */
export interface ResourceHandle {
  /** The syscall whose right reading it rides on, for this caller. */
  via: string;
  /** Its content as text (JSON), within the provider's size bound. */
  read(ctx: SyscallContext): Promise<{ mimeType: string; text: string }>;
  /** The key a subscription to it watches (`ResourceProvider.touches` yields it when it changes). */
  watch(ctx: SyscallContext): Promise<string>;
}

/** What lets a listing ask which syscalls the caller may call (the gate's answer). */
export interface ListContext extends SyscallContext {
  mayCall(syscall: string): boolean;
}

export interface ResourceProvider {
  templates: readonly ResourceTemplateInfo[];
  /** The prefix of the URIs it answers (`warren:`). */
  scheme: string;
  /** What `uri` names; throws `invalid_input` for one of its scheme that fits no template. */
  open(uri: string, principal: Principal): ResourceHandle;
  /** One page of what the caller may read, and the cursor of the next. */
  list(ctx: ListContext, cursor: string | undefined): Promise<{ resources: ResourceInfo[]; next?: string }>;
  /** The keys a committed event changes (what `watch` keys match). */
  touches(event: LogEvent): readonly string[];
}

/** One argument of a prompt. */
export interface PromptArgument {
  name: string;
  description: string;
  required?: boolean;
  /** The kind of name `completion/complete` offers for it (a plugin's Completion.kind). */
  complete?: string;
}

/** A prompt message (MCP `prompts/get`): text, or a resource's content embedded. */
export interface PromptText {
  role: 'user' | 'assistant';
  content:
    | { type: 'text'; text: string }
    | { type: 'resource'; resource: { uri: string; mimeType: string; text: string } };
}

/** What rendering a prompt may do: call syscalls as the caller, through the door. */
export interface PromptContext {
  principal: Principal;
  /** The syscalls the caller may call. */
  tools: ReadonlySet<string>;
  call(name: string, input: unknown): Promise<unknown>;
}

export interface PromptSource {
  name: string;
  title: string;
  description: string;
  arguments: readonly PromptArgument[];
  /** Offered only to callers that may call every one of these syscalls (and, if set, of this kind). */
  requires: readonly string[];
  callers?: Principal['kind'];
  render(ctx: PromptContext, args: Record<string, string>): Promise<PromptText[]>;
}
