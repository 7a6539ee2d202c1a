import type { ServerResponse } from 'node:http';

/**
 * A mock model API that serves so many model calls at once and answers 429 past that (with
 * `retry-after` when given), as a provider's rate limit does; `load` is what it saw.
 */
export interface Capacity {
  concurrent: number;
  retryAfterS?: number;
}

export interface Load {
  inFlight: number;
  most: number;
  refused: number;
}

/** True when the call was refused (answered 429 with `body`); else it is counted in flight until its answer closes. */
export function refusedAtCapacity(
  res: ServerResponse,
  load: Load,
  capacity: Capacity | undefined,
  body: unknown,
): boolean {
  if (capacity && load.inFlight >= capacity.concurrent) {
    load.refused++;
    const after = capacity.retryAfterS;
    res.writeHead(429, {
      'content-type': 'application/json',
      ...(after !== undefined ? { 'retry-after': String(after) } : {}),
    });
    res.end(JSON.stringify(body));
    return true;
  }
  load.inFlight++;
  load.most = Math.max(load.most, load.inFlight);
  res.once('close', () => load.inFlight--);
  return false;
}
