import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import type { Syscall } from '../../contract/syscall.ts';
import { toolInputSchema } from '../../contract/tool-schema.ts';

/** A group tool as MCP lists it: its syscall's schema, less `group` (a socket's group is its path). */
export function toolOf(s: Syscall): Tool {
  const input: Record<string, unknown> = toolInputSchema(s);
  const props = input.properties as Record<string, unknown> | undefined;
  if (props) delete props.group;
  if (Array.isArray(input.required)) input.required = input.required.filter((r) => r !== 'group');
  return {
    name: s.name,
    title: s.summary,
    description: s.description ?? s.summary,
    inputSchema: input as Tool['inputSchema'],
  };
}
