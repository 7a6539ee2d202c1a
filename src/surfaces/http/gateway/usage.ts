import { StringDecoder } from 'node:string_decoder';
import type { ModelUsage } from '../../../kernel/gateway/prices.ts';

/**
 * The usage of one model answer, read from the bytes as they pass through the gateway (which
 * forwards them untouched): the SSE events that carry it, or a JSON answer's `usage`. Only
 * those events are parsed; every other event (the text deltas) is skipped by a substring
 * test. Where the usage is, and what its counts are named, is the provider's (`UsageShape`).
 */
export class AnswerUsage {
  private readonly decoder = new StringDecoder('utf8');
  private pending = '';
  private readonly counts: Record<string, number> = {};
  private seen = false;
  /** The model the provider says answered. */
  model: string | null = null;

  constructor(
    private readonly shape: UsageShape,
    private readonly stream: boolean,
  ) {}

  push(chunk: Buffer): void {
    this.pending += this.decoder.write(chunk);
    if (!this.stream) return;
    let end = this.separator();
    while (end >= 0) {
      this.event(this.pending.slice(0, end));
      this.pending = this.pending.slice(end).replace(/^(\r?\n){2}/, '');
      end = this.separator();
    }
  }

  /** The answer is complete: its usage, or null when it carried none (an error). */
  end(): ModelUsage | null {
    this.pending += this.decoder.end();
    if (this.stream) {
      if (this.pending.trim()) this.event(this.pending);
    } else {
      try {
        const body = JSON.parse(this.pending) as { model?: unknown; usage?: unknown };
        this.take(body.usage, body.model);
      } catch {
        // Not JSON (an error page): nothing was used that the provider told of.
      }
    }
    this.pending = '';
    return this.seen ? this.shape.usage((k) => this.counts[k] ?? 0) : null;
  }

  private separator(): number {
    const lf = this.pending.indexOf('\n\n');
    const crlf = this.pending.indexOf('\r\n\r\n');
    if (lf < 0) return crlf;
    return crlf < 0 ? lf : Math.min(lf, crlf);
  }

  private event(text: string): void {
    if (!this.shape.events.some((name) => text.includes(name))) return;
    const data = text
      .split(/\r?\n/)
      .filter((l) => l.startsWith('data:'))
      .map((l) => l.slice(5).trimStart())
      .join('\n');
    let value: unknown;
    try {
      value = JSON.parse(data);
    } catch {
      return;
    }
    const found = value && typeof value === 'object' ? this.shape.event(value as Json) : null;
    if (found) this.take(found.usage, found.model);
  }

  /** Counts as given (a later one replaces an earlier), and those one object deeper as `outer.inner`. */
  private take(usage: unknown, model: unknown): void {
    if (typeof model === 'string') this.model = model;
    if (!usage || typeof usage !== 'object') return;
    for (const [k, v] of Object.entries(usage)) {
      if (v && typeof v === 'object') {
        for (const [k2, v2] of Object.entries(v)) this.count(`${k}.${k2}`, v2);
      } else this.count(k, v);
    }
  }

  private count(k: string, v: unknown): void {
    if (typeof v === 'number' && Number.isFinite(v) && v >= 0) {
      this.counts[k] = v;
      this.seen = true;
    }
  }
}

type Json = Record<string, unknown> & { type?: unknown };
const obj = (v: unknown): Json | undefined => (v && typeof v === 'object' ? (v as Json) : undefined);

/** Where a provider's answers carry their usage, and what its counts mean. */
export interface UsageShape {
  /** The names of the stream events that can carry usage (a substring test before parsing). */
  events: readonly string[];
  /** The usage and model in one such event, or null. */
  event(value: Json): { usage: unknown; model: unknown } | null;
  /** The counts read, by name (`a.b` for a nested count), as the gateway meters them. */
  usage(n: (k: string) => number): ModelUsage;
}

/**
 * Anthropic Messages: a stream says it in two events, `message_start` (the input side:
 * `input_tokens`, `cache_creation_input_tokens`, `cache_read_input_tokens`, and a first
 * `output_tokens`) and `message_delta` (cumulative counts, `output_tokens` at least).
 */
export const ANTHROPIC_USAGE: UsageShape = {
  events: ['message_start', 'message_delta'],
  event(v) {
    if (v.type === 'message_start') return { usage: obj(v.message)?.usage, model: obj(v.message)?.model };
    if (v.type === 'message_delta') return { usage: v.usage, model: undefined };
    return null;
  },
  usage: (n) => ({
    inputTokens: n('input_tokens'),
    outputTokens: n('output_tokens'),
    cacheReadTokens: n('cache_read_input_tokens'),
    cacheWriteTokens: n('cache_creation_input_tokens'),
  }),
};

/**
 * OpenAI Responses: a stream's usage is in its last event, `response.completed` (or
 * `response.incomplete`, `response.failed`), as the response's `usage`; `input_tokens`
 * includes the cached ones (`input_tokens_details.cached_tokens`), which are not written
 * at a price of their own.
 */
export const OPENAI_USAGE: UsageShape = {
  events: ['response.completed', 'response.incomplete', 'response.failed'],
  event(v) {
    const r = obj(v.response);
    return r ? { usage: r.usage, model: r.model } : null;
  },
  usage: (n) => {
    const cached = Math.min(n('input_tokens_details.cached_tokens'), n('input_tokens'));
    return {
      inputTokens: n('input_tokens') - cached,
      outputTokens: n('output_tokens'),
      cacheReadTokens: cached,
      cacheWriteTokens: 0,
    };
  },
};
