import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import {
  ErrorCode,
  ListResourcesRequestSchema,
  ListResourceTemplatesRequestSchema,
  McpError,
  ReadResourceRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';
import type { Warren } from '../../syscalls/warren.ts';
import { WarrenError } from '../../vocab/errors.ts';
import type { Principal } from '../../vocab/principal.ts';

/**
 * Resources: what the loaded plugins offer to read (the core plugin: the caller's log, the
 * sessions and streams it may read, as `warren://` URIs). The door checks each against the
 * syscall it rides on; this file only speaks MCP.
 */
export function registerResources(server: Server, warren: Warren, principal: Principal): void {
  const door = warren.contributions;
  server.setRequestHandler(ListResourceTemplatesRequestSchema, async () => ({
    resourceTemplates: door.templates(),
  }));
  server.setRequestHandler(ListResourcesRequestSchema, async (req) => {
    try {
      const page = await door.list(principal, req.params?.cursor);
      return page.next === undefined
        ? { resources: page.resources }
        : { resources: page.resources, nextCursor: page.next };
    } catch (error) {
      throw asMcpError(error, {});
    }
  });
  server.setRequestHandler(ReadResourceRequestSchema, async (req) => {
    const u = req.params.uri;
    let content: { mimeType: string; text: string } | null;
    try {
      content = await door.read(principal, u);
    } catch (error) {
      throw asMcpError(error, { uri: u });
    }
    if (!content) throw new McpError(ErrorCode.InvalidParams, 'Resource not found', { uri: u });
    return { contents: [{ uri: u, ...content }] };
  });
}

/**
 * A refusal as the client sees it: unknown or unreadable is invalid params, with what was
 * asked for (`{ uri }`) and the typed code. Anything else stays an internal error.
 */
export function asMcpError(error: unknown, about: Record<string, string>): unknown {
  if (!(error instanceof WarrenError) || error.code === 'internal') return error;
  const message = error.code === 'not_found' ? `Resource not found: ${error.message}` : error.message;
  return new McpError(ErrorCode.InvalidParams, message, { ...about, code: error.code });
}
