import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import type { Syscall } from '../../contract/syscall.ts';
import type { Warren } from '../../syscalls/warren.ts';
import type { Principal } from '../../vocab/principal.ts';
import { SubscriptionHub } from './subscription-hub.ts';

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

  /** Exactly the tools this caller may call. Built on first use: a server starts without it. */
  visible(principal: Principal): Tool[] {
    this.tools ??= new Map([...this.warren.table.values()].map((s) => [s.name, toTool(s)]));
    const tools = this.tools;
    return this.warren.gate.visible(principal).map((s) => tools.get(s.name)!);
  }
}

function toTool(s: Syscall): Tool {
  const input = z.toJSONSchema(s.input, { io: 'input', unrepresentable: 'any' }) as Record<string, unknown>;
  delete input.$schema;
  return {
    name: s.name,
    title: s.summary,
    description: s.description ?? s.summary,
    inputSchema: { type: 'object', ...input } as Tool['inputSchema'],
  };
}
