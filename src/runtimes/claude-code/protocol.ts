/** The pieces of Claude Code's stream-json protocol the runtime reads and writes. */

export type Json = Record<string, unknown>;

export interface Block {
  type: string;
  text?: string;
  id?: string;
  name?: string;
  input?: unknown;
  tool_use_id?: string;
  content?: unknown;
  is_error?: boolean;
}

/** Warren's tools, as the CLI names them. */
export const MCP_PREFIX = 'mcp__warren__';

export const userMessage = (text: string): string =>
  `${JSON.stringify({
    type: 'user',
    message: { role: 'user', content: text },
    parent_tool_use_id: null,
    session_id: '',
  })}\n`;

export const controlRequest = (id: string, subtype: string): string =>
  `${JSON.stringify({ type: 'control_request', request_id: id, request: { subtype } })}\n`;

export const controlError = (requestId: unknown, error: string): string =>
  `${JSON.stringify({ type: 'control_response', response: { subtype: 'error', request_id: requestId, error } })}\n`;

export function blocksOf(message: unknown): Block[] {
  const content = (message as { content?: unknown } | undefined)?.content;
  if (typeof content === 'string') return [{ type: 'text', text: content }];
  return Array.isArray(content) ? (content as Block[]) : [];
}

export function resultText(content: unknown): string {
  if (typeof content === 'string') return content;
  if (Array.isArray(content))
    return content
      .map((c) =>
        c && typeof c === 'object' && typeof (c as Block).text === 'string' ? (c as Block).text : '',
      )
      .join('\n');
  return content === undefined ? '' : JSON.stringify(content);
}

export const num = (v: unknown): number => (typeof v === 'number' && Number.isFinite(v) ? v : 0);

/**
 * `{"type":"system","subtype":"api_retry","attempt":3,"max_retries":10,"error_status":529,
 * "error":"overloaded",…}`, as the status a session shows while the CLI waits to retry.
 */
export function retryActivity(msg: Json, unreachable?: string | null): string {
  const attempt = num(msg.attempt);
  const max = num(msg.max_retries);
  return `retrying model API, attempt ${attempt}${max ? `/${max}` : ''} (${retryWhy(msg, unreachable)})`;
}

/** No HTTP status: the call got no answer (`"error":"unknown"`), said as what warren found. */
export const noAnswer = (msg: Json): boolean => typeof msg.error_status !== 'number';

/** "529 overloaded", or for a call that got no answer "unreachable: ECONNREFUSED 127.0.0.1:4000". */
export function retryWhy(msg: Json, unreachable?: string | null): string {
  if (noAnswer(msg)) return unreachable ? `unreachable: ${unreachable}` : 'no answer from the model API';
  const error = typeof msg.error === 'string' ? msg.error : '';
  return [`${msg.error_status}`, error].filter(Boolean).join(' ');
}

/** Subtypes of a failed `result` that are not API errors, as what happened. */
const RESULT_FAILURES: Record<string, string> = {
  error_max_turns: 'claude stopped: it reached its maximum number of turns',
  error_max_budget_usd: 'claude stopped: it reached its budget',
  error_during_execution: 'claude turn failed during execution',
};

/**
 * Why a `result` with `is_error` (or an `error_*` subtype) failed, read as what happened. The
 * CLI reports a failed model call as subtype `success` with `is_error`: that is an API error.
 */
export function failedResultText(msg: Json, lastApiError: string | undefined): string {
  const subtype = typeof msg.subtype === 'string' ? msg.subtype : 'error';
  const errors = Array.isArray(msg.errors) ? msg.errors.map(String).join('; ') : '';
  const detail = (typeof msg.result === 'string' && msg.result) || errors || lastApiError || 'no detail';
  const known = RESULT_FAILURES[subtype];
  if (known) return `${known}: ${detail}`;
  if (subtype === 'success' || lastApiError !== undefined || typeof msg.api_error_status === 'number')
    return `the model API returned an error: ${detail}`;
  return `claude turn failed (${subtype}): ${detail}`;
}

/** What resume needs. */
export interface SavedState {
  claudeSessionId?: string;
  cwd?: string;
  /** The spawn prompt's turn has ended: a resume must not send it again. */
  prompted?: boolean;
}

export function readState(s: Record<string, unknown> | null): SavedState {
  if (!s) return {};
  return {
    ...(typeof s.claudeSessionId === 'string' ? { claudeSessionId: s.claudeSessionId } : {}),
    ...(typeof s.cwd === 'string' ? { cwd: s.cwd } : {}),
    ...(s.prompted === true ? { prompted: true } : {}),
  };
}
