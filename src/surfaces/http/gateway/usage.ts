import { StringDecoder } from 'node:string_decoder';
import type { ModelUsage } from '../../../kernel/gateway/prices.ts';

/**
 * The usage of one Anthropic Messages answer, read from the bytes as they pass through the
 * gateway (which forwards them untouched). A stream says it in two events: `message_start`
 * (the input side: `input_tokens`, `cache_creation_input_tokens`, `cache_read_input_tokens`,
 * and a first `output_tokens`) and `message_delta` (cumulative counts, `output_tokens` at
 * least): a later count replaces an earlier one. A JSON answer has one `usage`. Only those
 * events are parsed; every other event (the text deltas) is skipped by a substring test.
 */
export class AnthropicUsage {
  private readonly decoder = new StringDecoder('utf8');
  private pending = '';
  private readonly counts: Record<string, number> = {};
  private seen = false;
  /** The model the provider says answered. */
  model: string | null = null;

  constructor(private readonly stream: boolean) {}

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
    if (!this.seen) return null;
    const n = (k: string) => this.counts[k] ?? 0;
    return {
      inputTokens: n('input_tokens'),
      outputTokens: n('output_tokens'),
      cacheReadTokens: n('cache_read_input_tokens'),
      cacheWriteTokens: n('cache_creation_input_tokens'),
    };
  }

  private separator(): number {
    const lf = this.pending.indexOf('\n\n');
    const crlf = this.pending.indexOf('\r\n\r\n');
    if (lf < 0) return crlf;
    return crlf < 0 ? lf : Math.min(lf, crlf);
  }

  private event(text: string): void {
    const start = text.includes('message_start');
    if (!start && !text.includes('message_delta')) return;
    const data = text
      .split(/\r?\n/)
      .filter((l) => l.startsWith('data:'))
      .map((l) => l.slice(5).trimStart())
      .join('\n');
    let value: { type?: unknown; message?: { usage?: unknown; model?: unknown }; usage?: unknown };
    try {
      value = JSON.parse(data);
    } catch {
      return;
    }
    if (value.type === 'message_start') this.take(value.message?.usage, value.message?.model);
    else if (value.type === 'message_delta') this.take(value.usage, undefined);
  }

  private take(usage: unknown, model: unknown): void {
    if (typeof model === 'string') this.model = model;
    if (!usage || typeof usage !== 'object') return;
    for (const [k, v] of Object.entries(usage)) {
      if (typeof v === 'number' && Number.isFinite(v) && v >= 0) {
        this.counts[k] = v;
        this.seen = true;
      }
    }
  }
}
