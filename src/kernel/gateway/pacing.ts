/**
 * Requests and tokens per minute on one provider key (docs/gateway.md): from the
 * configuration (`gateway.rpm`, `gateway.tpm`: a sliding minute of what the gateway sent) and
 * from the provider's own rate-limit headers (what it says is left, and when that resets). A
 * call that would pass either waits until it would not, instead of being sent to be refused.
 */

export interface PaceConfig {
  /** Requests per minute per key (0: no limit). */
  rpm: number;
  /** Tokens per minute per key, input and output (0: no limit). */
  tpm: number;
}

const MINUTE = 60_000;

/** What the provider last said is left of one of its limits, until when. */
interface Told {
  left: number;
  resetAt: number;
}

export class Pace {
  /** When each call of the last minute was sent. */
  private readonly sent: number[] = [];
  /** Tokens counted in the last minute: an estimate when sent, corrected once answered. */
  private readonly tokens: Array<{ at: number; n: number }> = [];
  private tokenSum = 0;
  private requestsTold: Told | null = null;
  private tokensTold: Told | null = null;

  /** How long a call of `n` tokens must wait before it may be sent now (0: it may). */
  waitMs(n: number, now: number, cfg: PaceConfig): number {
    this.prune(now);
    let wait = 0;
    if (cfg.rpm > 0 && this.sent.length >= cfg.rpm) {
      wait = Math.max(wait, this.sent[this.sent.length - cfg.rpm]! + MINUTE - now);
    }
    // A call larger than the whole limit goes alone, once the minute is clear.
    if (cfg.tpm > 0 && this.tokenSum > 0 && this.tokenSum + n > cfg.tpm) {
      let sum = this.tokenSum;
      for (const t of this.tokens) {
        sum -= t.n;
        if (sum + n <= cfg.tpm || sum <= 0) {
          wait = Math.max(wait, t.at + MINUTE - now);
          break;
        }
      }
    }
    const r = this.requestsTold;
    if (r && now < r.resetAt && r.left <= 0) wait = Math.max(wait, r.resetAt - now);
    const t = this.tokensTold;
    if (t && now < t.resetAt && t.left < n) wait = Math.max(wait, t.resetAt - now);
    return Math.max(0, wait);
  }

  /** A call of `n` tokens is sent now. */
  take(n: number, now: number): void {
    this.sent.push(now);
    this.count(n, now);
    if (this.requestsTold && now < this.requestsTold.resetAt) this.requestsTold.left--;
    if (this.tokensTold && now < this.tokensTold.resetAt) this.tokensTold.left -= n;
  }

  /** A sent call turned out to use `delta` tokens more (or fewer) than it was counted at. */
  count(delta: number, now: number): void {
    if (delta === 0) return;
    this.tokens.push({ at: now, n: delta });
    this.tokenSum += delta;
  }

  /** What an answer's rate-limit headers say is left (Anthropic's and OpenAI's names). */
  heard(headers: Record<string, unknown>, now: number): void {
    const requests = told(
      headers,
      ['anthropic-ratelimit-requests-remaining', 'x-ratelimit-remaining-requests'],
      ['anthropic-ratelimit-requests-reset', 'x-ratelimit-reset-requests'],
      now,
    );
    const tokens = told(
      headers,
      ['anthropic-ratelimit-tokens-remaining', 'x-ratelimit-remaining-tokens'],
      ['anthropic-ratelimit-tokens-reset', 'x-ratelimit-reset-tokens'],
      now,
    );
    if (requests) this.requestsTold = requests;
    if (tokens) this.tokensTold = tokens;
  }

  private prune(now: number): void {
    const from = now - MINUTE;
    while (this.sent.length > 0 && this.sent[0]! <= from) this.sent.shift();
    while (this.tokens.length > 0 && this.tokens[0]!.at <= from) this.tokenSum -= this.tokens.shift()!.n;
  }
}

function told(
  headers: Record<string, unknown>,
  remaining: readonly string[],
  reset: readonly string[],
  now: number,
): Told | null {
  const r = remaining.map((k) => headers[k]).find((v) => typeof v === 'string');
  const at = reset.map((k) => headers[k]).find((v) => typeof v === 'string');
  const left = Number(r);
  if (typeof r !== 'string' || r.trim() === '' || !Number.isFinite(left) || typeof at !== 'string')
    return null;
  const resetAt = resetTime(at, now);
  return resetAt === null ? null : { left, resetAt };
}

/**
 * When a limit resets: Anthropic gives a time (RFC 3339), OpenAI a duration (`1s`, `6m0s`,
 * `20ms`, `1h2m3.5s`); a bare number is seconds.
 */
export function resetTime(value: string, now: number): number | null {
  const v = value.trim();
  if (/^\d+(\.\d+)?$/.test(v)) return now + Number(v) * 1000;
  if (/^(\d+(\.\d+)?(ms|h|m|s))+$/.test(v)) {
    let ms = 0;
    for (const [, n, unit] of v.matchAll(/(\d+(?:\.\d+)?)(ms|h|m|s)/g)) {
      ms += Number(n) * ({ ms: 1, s: 1000, m: MINUTE, h: 60 * MINUTE } as const)[unit as 'ms'];
    }
    return now + ms;
  }
  const at = Date.parse(v);
  return Number.isFinite(at) ? at : null;
}
