import { randomUUID } from 'node:crypto';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { RequestHandlerExtra } from '@modelcontextprotocol/sdk/shared/protocol.js';
import {
  CallToolRequestSchema,
  type CallToolResult,
  ErrorCode,
  ListToolsRequestSchema,
  McpError,
  type ServerNotification,
  type ServerRequest,
} from '@modelcontextprotocol/sdk/types.js';
import { inputError } from '../../syscalls/dispatch.ts';
import type { CallExtra, Warren } from '../../syscalls/warren.ts';
import type { Principal } from '../../vocab/principal.ts';
import { type ErrorLog, publicError, stderrLog } from '../../vocab/public-error.ts';
import type { ToolCatalog } from './catalog.ts';
import { registerCompletion } from './completion.ts';
import { registerPrompts } from './prompts.ts';
import { registerResources } from './resources.ts';
import { registerSubscriptions } from './subscriptions.ts';
import { enableInput, groupsOf, parseGroups, TOOLS_ENABLE, TOOLS_GROUPS, union } from './tool-groups.ts';

type ToolCallExtra = RequestHandlerExtra<ServerRequest, ServerNotification>;

export const SERVER_INFO = { name: 'warren', version: '0.1.0' } as const;
/**
 * One MCP server per connection, bound to the principal that opened it. It lists the
 * caller's tools and calls them through `warren.call` — the same path as REST and the CLI —
 * and serves the caller's resources (with subscriptions), prompts and completions.
 */
export function createMcpServer(
  warren: Warren,
  catalog: ToolCatalog,
  principal: Principal,
  opts: {
    log?: ErrorLog;
    /** Tool groups on from the start (an operator's `?tools=`; checked by the caller). */
    toolGroups?: readonly string[];
  } = {},
): Server {
  const log = opts.log ?? stderrLog;
  // An operator's list grows on request (tool-groups.ts); a session's was fixed at spawn.
  const growable = principal.kind === 'operator';
  let enabled: ReadonlySet<string> | 'all' = opts.toolGroups
    ? parseGroups(warren.gate, opts.toolGroups)
    : new Set();
  const server = new Server(SERVER_INFO, {
    capabilities: {
      tools: { listChanged: growable },
      logging: {},
      resources: { subscribe: true, listChanged: false },
      prompts: { listChanged: false },
      completions: {},
    },
    instructions:
      'warren is an agent kernel. Your fds: 0 stdin, 1 your pipe to your parent (reply there), 2 your lifecycle. ' +
      'Spawn children with ipc_spawn, talk with ipc_write / ipc_read, wait with ipc_wait, and close the fds you own before you stop.',
  });

  server.setRequestHandler(ListToolsRequestSchema, async () => ({
    tools: catalog.listed(principal, enabled),
  }));
  /** tools_groups / tools_enable: the connection's own, answered here (not syscalls). */
  const connectionCall = (name: string, args: unknown): Record<string, unknown> => {
    if (name === TOOLS_GROUPS) return groupsOf(warren.gate, principal, enabled, (s) => catalog.tokensOf(s));
    const parsed = enableInput.safeParse(args ?? {});
    if (!parsed.success) throw inputError(name, parsed.error);
    enabled = union(enabled, parseGroups(warren.gate, parsed.data.groups));
    void server.sendToolListChanged().catch(() => {});
    return { listed: catalog.listed(principal, enabled).map((t) => t.name) };
  };
  registerResources(server, warren, principal);
  registerPrompts(server, warren, principal);
  registerCompletion(server, warren, principal);
  // A connection that goes away (socket closed, HTTP session deleted or expired) takes its
  // subscriptions with it.
  const subscriptions = registerSubscriptions(server, warren, principal, catalog.subscriptions);
  server.onclose = () => subscriptions.close();

  server.setRequestHandler(CallToolRequestSchema, async (request, extra): Promise<CallToolResult> => {
    const { name, arguments: args } = request.params;
    const own = growable && (name === TOOLS_GROUPS || name === TOOLS_ENABLE);
    if (!own && !warren.table.has(name)) throw new McpError(ErrorCode.InvalidParams, `Unknown tool: ${name}`);
    // Over HTTP, a client's W3C traceparent makes the call's span join its trace.
    const traceparent = extra.requestInfo?.headers.traceparent;
    const callExtra: CallExtra = { signal: extra.signal };
    if (typeof traceparent === 'string') callExtra.traceparent = traceparent;
    // Progress only for a caller that asked (a progress token): no timer otherwise.
    const token = request.params._meta?.progressToken;
    const timer = token === undefined ? undefined : progressOf(extra, token, name, callExtra);
    try {
      const out = own
        ? connectionCall(name, args)
        : ((await warren.call(principal, name, args ?? {}, callExtra)) as Record<string, unknown>);
      warren.metrics?.mcpCall(name, 'ok');
      return { content: [{ type: 'text', text: JSON.stringify(out) }], structuredContent: out };
    } catch (error) {
      const requestId = `req_${randomUUID().replaceAll('-', '').slice(0, 20)}`;
      const we = publicError(error, requestId, log);
      warren.metrics?.mcpCall(name, we.code);
      const typed = { ...we.toJSON(), requestId };
      // Also as a log notification, filtered by the level the client set (logging/setLevel).
      void server
        .sendLoggingMessage(
          {
            level: we.code === 'internal' ? 'error' : 'warning',
            logger: 'warren',
            data: { tool: name, ...typed },
          },
          extra.sessionId,
        )
        .catch(() => {});
      return {
        isError: true,
        content: [{ type: 'text', text: `error [${we.code}]: ${we.message}` }],
        structuredContent: { error: typed },
      };
    } finally {
      if (timer) clearInterval(timer);
    }
  });

  /** Progress notifications for one call: `callExtra.progress`, and a timer that says "still waiting". */
  const progressOf = (
    extra: ToolCallExtra,
    token: string | number,
    name: string,
    callExtra: CallExtra,
  ): NodeJS.Timeout => {
    let ticks = 0;
    const progress = (message: string) =>
      void extra
        .sendNotification({
          method: 'notifications/progress',
          params: { progressToken: token, progress: ++ticks, message },
        })
        .catch(() => {});
    callExtra.progress = progress;
    return setInterval(() => progress(`${name}: still waiting`), catalog.progressEveryMs);
  };
  return server;
}
