import { randomUUID } from 'node:crypto';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  ListToolsRequestSchema,
  type Tool,
} from '@modelcontextprotocol/sdk/types.js';
import { WarrenError } from '../../vocab/errors.ts';
import type { Principal } from '../../vocab/principal.ts';
import { type ErrorLog, publicError } from '../../vocab/public-error.ts';
import { checkScheduleCall, scopeScheduleOutput } from './schedules.ts';
import { refusal, TIER_LABELS, tierOf } from './tiers.ts';

type Call = (p: Principal, name: string, input: unknown) => Promise<unknown>;

/** What a group's socket serves: fixed when the socket opens (its grants are read then). */
export interface GroupSocketSpec {
  folder: string;
  depth: number;
  rules: readonly string[];
  principal: Principal;
  /** The tools it may call, in table order. */
  tools: readonly Tool[];
}

/**
 * The MCP server of one connection to a group's socket: lists exactly the group's tools and
 * calls them as the group through the one dispatch path; anything else is `forbidden`,
 * naming the tier and the rule.
 */
export function groupMcpServer(spec: GroupSocketSpec, call: Call, log: ErrorLog): Server {
  const server = new Server(
    { name: 'warren-groups', version: '0.1.0' },
    {
      capabilities: { tools: { listChanged: false } },
      instructions: `You are group ${spec.folder} (tier ${tierOf(spec.depth)}, ${TIER_LABELS[tierOf(spec.depth)]}). These are the tools your group may call.`,
    },
  );
  const allowed = new Set(spec.tools.map((t) => t.name));
  server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools: [...spec.tools] }));
  server.setRequestHandler(CallToolRequestSchema, async (request): Promise<CallToolResult> => {
    const { name, arguments: raw } = request.params;
    const requestId = `req_${randomUUID().replaceAll('-', '').slice(0, 20)}`;
    try {
      if (!allowed.has(name)) {
        const why = refusal(spec.depth, spec.rules, name) ?? `${name} is not among this group's tools`;
        throw new WarrenError('forbidden', `group ${spec.folder} (tier ${tierOf(spec.depth)}): ${why}`, {
          tool: name.slice(0, 100),
          tier: tierOf(spec.depth),
        });
      }
      // The group is the socket's: whatever the caller says in `group` is dropped.
      const { group: _ignored, ...args } = (raw ?? {}) as Record<string, unknown>;
      await checkScheduleCall(call, spec.principal, name, args);
      const out = scopeScheduleOutput(
        spec.principal,
        name,
        (await call(spec.principal, name, args)) as Record<string, unknown>,
      );
      return { content: [{ type: 'text', text: JSON.stringify(out) }], structuredContent: out };
    } catch (error) {
      const we = publicError(error, requestId, log);
      return {
        isError: true,
        content: [{ type: 'text', text: `error [${we.code}]: ${we.message}` }],
        structuredContent: { error: { ...we.toJSON(), requestId } },
      };
    }
  });
  return server;
}
