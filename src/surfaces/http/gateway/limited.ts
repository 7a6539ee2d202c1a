import type { IncomingMessage } from 'node:http';
import type { BreakerChange } from '../../../kernel/gateway/breaker.ts';
import {
  isRetryable,
  type KeyLimiter,
  type LimiterConfig,
  retryDelayMs,
} from '../../../kernel/gateway/limiter.ts';
import type { Upstream } from '../../../kernel/gateway/upstreams.ts';
import type { UpstreamCall, UpstreamClient } from './upstream.ts';

/** What the limiter did with a call, for the log. */
export interface LimitedHooks {
  /** A 429 or 529 answer held, to be retried after `waitMs`. */
  retry(status: number, attempt: number, waitMs: number): void;
  /** The call opened or closed its key's breaker. */
  breaker(change: BreakerChange): void;
}

/**
 * One call upstream under its key's limiter (kernel/gateway/limiter.ts): refused at once
 * (BreakerOpen) while the key's breaker is open; else it waits for a slot and for the key's
 * pace, and a 429 or 529 answer is held, its body dropped, and the call sent again once the
 * wait the provider asked for (or a backoff) has passed — for every call on the key — up to
 * `retries` times and `maxRetryWaitMs` of waiting; then the last answer goes to the agent.
 * Each answer's rate-limit headers go to the key's pace; the final outcome to its breaker.
 * Resolves with the answer to pass on and the slot's release (call it when the answer has
 * passed); rejects when no answer came (the slot is released then).
 */
export async function sendLimited(
  client: UpstreamClient,
  limiter: KeyLimiter,
  config: LimiterConfig,
  up: Upstream,
  call: UpstreamCall,
  tokens: number,
  hooks: LimitedHooks,
): Promise<{ answer: IncomingMessage; release: () => void }> {
  const probe = limiter.breaker.admit(Date.now(), config);
  let release: () => void;
  try {
    release = await limiter.acquire(call.signal, tokens);
  } catch (error) {
    limiter.breaker.abandon(probe);
    throw error;
  }
  const outcome = (ok: boolean, cause: string) => {
    const change = limiter.breaker.outcome(ok, cause, probe, Date.now(), config);
    if (change) hooks.breaker(change);
  };
  const started = Date.now();
  try {
    for (let attempt = 0; ; attempt++) {
      const answer = await client.send(up, call);
      limiter.heard(answer.headers);
      const status = answer.statusCode ?? 0;
      const waitMs = retryDelayMs(answer.headers, attempt);
      if (
        !isRetryable(status) ||
        attempt >= config.retries ||
        Date.now() - started + waitMs > config.maxRetryWaitMs
      ) {
        outcome(status < 500, String(status));
        return { answer, release };
      }
      answer.resume(); // dropped: the connection goes back to the pool
      limiter.backOff(waitMs);
      hooks.retry(status, attempt + 1, waitMs);
      await limiter.ready(call.signal, 0);
    }
  } catch (error) {
    release();
    if (call.signal.aborted) limiter.breaker.abandon(probe);
    else outcome(false, (error as NodeJS.ErrnoException).code ?? (error as Error).message);
    throw error;
  }
}
