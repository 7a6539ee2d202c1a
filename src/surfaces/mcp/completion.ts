import type { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CompleteRequestSchema, type CompleteResult } from '@modelcontextprotocol/sdk/types.js';
import type { Warren } from '../../syscalls/warren.ts';
import type { Principal } from '../../vocab/principal.ts';

/** The spec's cap on values per answer. */
export const MAX_COMPLETIONS = 100;
/** A prefix longer than any id or name is cut here before it reaches a query. */
const MAX_PREFIX = 256;

/** Variables of the core plugin's resource templates and the kind of name (Completion.kind) each takes. */
const TEMPLATE_VARS: Record<string, Record<string, string>> = {
  'warren://sessions/{id}': { id: 'sessions' },
  'warren://sessions/{id}/events{?after,limit}': { id: 'sessions' },
  'warren://sessions/{id}/events': { id: 'sessions' },
  'warren://streams/{name}/transcript{?before,limit}': { name: 'streams' },
  'warren://streams/{name}/transcript': { name: 'streams' },
};

/**
 * `completion/complete` for prompt arguments (`ref/prompt`) and resource template variables
 * (`ref/resource`): session ids, stream names, task ids and persona names the caller may
 * see, starting with what it typed, at most 100 (`hasMore` when there are more). Anything
 * warren does not complete answers with no values, not an error.
 */
export function registerCompletion(server: Server, warren: Warren, principal: Principal): void {
  server.setRequestHandler(CompleteRequestSchema, async (req): Promise<CompleteResult> => {
    const { ref, argument } = req.params;
    const source =
      ref.type === 'ref/prompt'
        ? warren.contributions.promptArgKind(ref.name, argument.name)
        : ref.type === 'ref/resource'
          ? TEMPLATE_VARS[ref.uri]?.[argument.name]
          : undefined;
    if (!source) return { completion: { values: [], hasMore: false } };
    const prefix = argument.value.slice(0, MAX_PREFIX);
    // The door gates each plugin's completion like the syscall it rides on.
    const found = await warren.contributions.complete(principal, source, prefix, MAX_COMPLETIONS + 1);
    return {
      completion: { values: found.slice(0, MAX_COMPLETIONS), hasMore: found.length > MAX_COMPLETIONS },
    };
  });
}
