import type { IncomingMessage } from 'node:http';
import {
  isRetryable,
  type KeyLimiter,
  type LimiterConfig,
  retryDelayMs,
} from '../../../kernel/gateway/limiter.ts';
import type { Upstream } from '../../../kernel/gateway/upstreams.ts';
import type { UpstreamCall, UpstreamClient } from './upstream.ts';

/**
 * One call upstream under its key's limiter (kernel/gateway/limiter.ts): it waits for a slot,
 * and a 429 or 529 answer is held, its body dropped, and the call sent again once the wait
 * the provider asked for (or a backoff) has passed — for every call on the key — up to
 * `retries` times and `maxRetryWaitMs` of waiting; then the last answer goes to the agent.
 * Resolves with the answer to pass on and the slot's release (call it when the answer has
 * passed); rejects when no answer came (the slot is released then).
 */
export async function sendLimited(
  client: UpstreamClient,
  limiter: KeyLimiter,
  config: LimiterConfig,
  up: Upstream,
  call: UpstreamCall,
  onRetry: (status: number, attempt: number, waitMs: number) => void,
): Promise<{ answer: IncomingMessage; release: () => void }> {
  const release = await limiter.acquire(call.signal);
  const started = Date.now();
  try {
    for (let attempt = 0; ; attempt++) {
      const answer = await client.send(up, call);
      if (!isRetryable(answer.statusCode) || attempt >= config.retries) return { answer, release };
      const waitMs = retryDelayMs(answer.headers, attempt);
      if (Date.now() - started + waitMs > config.maxRetryWaitMs) return { answer, release };

      answer.resume(); // dropped: the connection goes back to the pool
      limiter.backOff(waitMs);
      onRetry(answer.statusCode ?? 0, attempt + 1, waitMs);
      await limiter.pause(call.signal);
    }
  } catch (error) {
    release();
    throw error;
  }
}
