import type { AnyMessage, SessionUpdate, ToolCallStatus } from '@agentclientprotocol/sdk';
import type { AgentSink } from '../types.ts';
import { blockText, clip, planEntries, toolContentText } from './render.ts';
import { describe, fire } from './stream.ts';

export interface ToolState {
  title: string;
  kind: string | null;
  status: ToolCallStatus | null;
}

/**
 * `session/update` notifications as log events: message text (one `output` per message,
 * streamed chunks joined), thoughts, tool calls and results, plans, usage and cost.
 */
export class UpdateLog {
  /** The message (or thought) being streamed, flushed as one event when it ends. */
  private text: { kind: 'message' | 'thought'; id: string | null; parts: string[] } | null = null;
  readonly tools = new Map<string, ToolState>();
  /** While `session/load` replays history, its updates are counted, not logged as new activity. */
  replaying = false;
  replayed = 0;

  constructor(
    private readonly sink: AgentSink,
    /** The session's cost so far (USD), as the agent reported it. */
    public costUsd: number,
    /** The cost grew: what resume needs has changed. */
    private readonly onCost: () => void,
  ) {}

  /** Every message from the agent, in order, before the SDK dispatches it: updates of `sessionId` are logged. */
  observe(m: AnyMessage, sessionId: string | null): void {
    if (!('method' in m) || 'id' in m || m.method !== 'session/update') return;
    const params = m.params as { sessionId?: unknown; update?: SessionUpdate } | undefined;
    const update = params?.update;
    if (!update || typeof update !== 'object' || typeof update.sessionUpdate !== 'string') return;
    if (sessionId !== null && params.sessionId !== sessionId) return;
    if (this.replaying) {
      this.replayed++;
      return;
    }
    try {
      this.onUpdate(update);
    } catch (error) {
      fire(this.sink.event('acp_error', { error: `a session/update could not be read: ${describe(error)}` }));
    }
  }

  onUpdate(u: SessionUpdate): void {
    const { sink } = this;
    switch (u.sessionUpdate) {
      case 'agent_message_chunk':
      case 'agent_thought_chunk': {
        const kind = u.sessionUpdate === 'agent_message_chunk' ? 'message' : 'thought';
        const id = u.messageId ?? null;
        if (this.text && (this.text.kind !== kind || (id !== null && this.text.id !== id))) this.flushText();
        this.text ??= { kind, id, parts: [] };
        this.text.parts.push(blockText(u.content));
        return;
      }
      case 'user_message_chunk':
        return; // the input it echoes is logged when delivered
      case 'tool_call': {
        this.flushText();
        const state: ToolState = { title: u.title, kind: u.kind ?? null, status: u.status ?? null };
        this.tools.set(u.toolCallId, state);
        fire(
          sink.event('tool_call', {
            toolCallId: u.toolCallId,
            title: u.title,
            ...(u.name ? { name: u.name } : {}),
            kind: u.kind ?? null,
            status: u.status ?? 'pending',
            ...(u.rawInput !== undefined ? { input: clip(u.rawInput) } : {}),
            ...(u.locations?.length ? { locations: u.locations.map((l) => l.path) } : {}),
          }),
        );
        if (u.status === 'completed' || u.status === 'failed') {
          this.toolResult(u.toolCallId, u.status, u.content, u.rawOutput);
        }
        return;
      }
      case 'tool_call_update': {
        this.flushText();
        const state = this.tools.get(u.toolCallId) ?? { title: u.title ?? '', kind: null, status: null };
        if (u.title) state.title = u.title;
        if (u.kind) state.kind = u.kind;
        this.tools.set(u.toolCallId, state);
        if (u.status === 'completed' || u.status === 'failed') {
          this.toolResult(u.toolCallId, u.status, u.content, u.rawOutput);
        } else if (u.status && u.status !== state.status) {
          state.status = u.status;
          fire(sink.event('tool_update', { toolCallId: u.toolCallId, title: state.title, status: u.status }));
        }
        return;
      }
      case 'plan':
        this.flushText();
        fire(sink.event('plan', { entries: planEntries(u.entries) }));
        return;
      case 'usage_update': {
        fire(sink.event('context', { used: u.used, size: u.size, ...(u.cost ? { cost: u.cost } : {}) }));
        if (u.cost && u.cost.currency === 'USD' && u.cost.amount > this.costUsd) {
          const delta = u.cost.amount - this.costUsd;
          this.costUsd = u.cost.amount;
          fire(sink.usage({ costUsd: delta }));
          this.onCost();
        }
        return;
      }
      case 'current_mode_update':
        fire(sink.event('mode', { mode: u.currentModeId, applied: true, byAgent: true }));
        return;
      case 'session_info_update':
        if (u.title) fire(sink.event('session_info', { title: u.title }));
        return;
      default:
        return; // available commands, config option changes, …: nothing warren acts on
    }
  }

  private toolResult(id: string, status: 'completed' | 'failed', content: unknown, rawOutput: unknown): void {
    const state = this.tools.get(id);
    this.tools.delete(id);
    const text = toolContentText(content as Parameters<typeof toolContentText>[0]);
    fire(
      this.sink.event('tool_result', {
        toolCallId: id,
        title: state?.title ?? '',
        status,
        ...(text !== undefined ? { output: clip(text) } : {}),
        ...(rawOutput !== undefined && text === undefined ? { output: clip(rawOutput) } : {}),
      }),
    );
  }

  /** The message (or thought) streamed so far, as one event. */
  flushText(): void {
    const t = this.text;
    this.text = null;
    if (!t) return;
    const text = t.parts.join('');
    if (text.trim().length === 0) return;
    if (t.kind === 'message') fire(this.sink.output(text));
    else fire(this.sink.event('thought', { text: clip(text, 16_000) }));
  }
}
