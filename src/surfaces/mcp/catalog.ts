import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Syscall } from '../../contract/syscall.ts';
import { toolInputSchema } from '../../contract/tool-schema.ts';
import type { Warren } from '../../syscalls/warren.ts';
import type { Principal } from '../../vocab/principal.ts';
import { SubscriptionHub } from './subscription-hub.ts';
import { connectionTools } from './tool-groups.ts';

/**
 * What the MCP surface keeps once per warren: the JSON schemas of the table's syscalls, and
 * the commit fan-out every connection's resource subscriptions share.
 */
export class ToolCatalog {
  private tools: Map<string, Tool> | undefined;
  readonly subscriptions: SubscriptionHub;

  constructor(
    private readonly warren: Warren,
    /** How often a long call reports progress (clients reset their timeouts on it). */
    readonly progressEveryMs = 5_000,
  ) {
    this.subscriptions = new SubscriptionHub({
      onCommit: (l) => warren.onAnyCommit(l),
      touches: (e) => warren.contributions.touches(e),
    });
  }

  private built(): Map<string, Tool> {
    this.tools ??= new Map([...this.warren.table.values()].map((s) => [s.name, toTool(s)]));
    return this.tools;
  }

  /**
   * The tools this caller's list shows (built on first use: a server starts without them): a
   * session's whole set; an operator's job defaults, the groups its connection turned on, and
   * the two tools that turn groups on.
   */
  listed(principal: Principal, enabled: ReadonlySet<string> | 'all' = new Set()): Tool[] {
    const tools = this.built();
    const mine = this.warren.gate.listed(principal, enabled).map((s) => tools.get(s.name)!);
    return principal.kind === 'operator' ? [...connectionTools(), ...mine] : mine;
  }

  /** What one syscall's tool costs a model, in tokens (JSON characters / 4). */
  tokensOf(s: Syscall): number {
    const t = this.built().get(s.name)!;
    return Math.round(
      JSON.stringify({ name: t.name, description: t.description, inputSchema: t.inputSchema }).length / 4,
    );
  }
}

export function toTool(s: Syscall): Tool {
  return {
    name: s.name,
    title: s.summary,
    description: s.description ?? s.summary,
    inputSchema: toolInputSchema(s) as Tool['inputSchema'],
  };
}
