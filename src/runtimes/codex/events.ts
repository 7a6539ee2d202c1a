import { MCP_SERVER } from './args.ts';

/** The events of `codex exec --json` the runtime reads, and how tool items become log events. */

export interface CodexUsage {
  input_tokens?: number;
  cached_input_tokens?: number;
  output_tokens?: number;
}

export interface CodexItem {
  id: string;
  type: string;
  text?: string;
  message?: string;
  items?: unknown[];
  // mcp_tool_call
  server?: string;
  tool?: string;
  arguments?: unknown;
  result?: unknown;
  error?: { message?: string } | null;
  status?: string;
  // command_execution
  command?: string;
  aggregated_output?: string;
  exit_code?: number | null;
  // file_change
  changes?: unknown[];
  // web_search
  query?: string;
  // collab_tool_call
  prompt?: string | null;
  receiver_thread_ids?: string[];
}

export interface CodexEvent {
  type: string;
  thread_id?: string;
  usage?: CodexUsage;
  error?: { message?: string };
  message?: string;
  item?: CodexItem;
}

export const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

/** The `tool_call` event for an item that is a tool call, or null. */
export function toolCall(item: CodexItem): Record<string, unknown> | null {
  switch (item.type) {
    case 'mcp_tool_call':
      return {
        id: item.id,
        tool: item.tool ?? '',
        server: item.server ?? null,
        // Warren's own tools carry their syscall names.
        ...(item.server === MCP_SERVER ? { syscall: item.tool } : {}),
        input: item.arguments ?? {},
      };
    case 'command_execution':
      return { id: item.id, tool: 'shell', input: { command: item.command ?? '' } };
    case 'file_change':
      return { id: item.id, tool: 'apply_patch', input: { changes: item.changes ?? [] } };
    case 'web_search':
      return { id: item.id, tool: 'web_search', input: { query: item.query ?? '' } };
    case 'collab_tool_call':
      return {
        id: item.id,
        tool: `collab.${item.tool ?? ''}`,
        input: { prompt: item.prompt ?? null, receivers: item.receiver_thread_ids ?? [] },
      };
    default:
      return null;
  }
}

const MAX_OUTPUT = 16_384;
const clip = (s: string) => (s.length > MAX_OUTPUT ? `${s.slice(0, MAX_OUTPUT)}… (${s.length} chars)` : s);

/** A tool's result as is, or (when it is large) its JSON text clipped. */
function clipJson(v: unknown): unknown {
  const text = JSON.stringify(v) ?? 'null';
  return text.length > MAX_OUTPUT ? { truncated: true, text: clip(text) } : v;
}

export function toolResult(item: CodexItem, call: Record<string, unknown>): Record<string, unknown> {
  const failed = item.status === 'failed' || item.status === 'declined' || !!item.error;
  const base = { id: item.id, tool: call.tool, status: item.status ?? (failed ? 'failed' : 'completed') };
  switch (item.type) {
    case 'mcp_tool_call':
      return {
        ...base,
        server: item.server ?? null,
        ...(item.server === MCP_SERVER ? { syscall: item.tool } : {}),
        ...(item.error
          ? { error: item.error.message ?? 'failed' }
          : { output: clipJson(item.result ?? null) }),
      };
    case 'command_execution':
      return {
        ...base,
        exitCode: item.exit_code ?? null,
        output: clip(item.aggregated_output ?? ''),
      };
    default:
      return { ...base, ...(item.error ? { error: item.error.message ?? 'failed' } : {}) };
  }
}
