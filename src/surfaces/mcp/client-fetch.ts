import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';

/**
 * A fetch for the MCP SDK's Streamable HTTP client transport that does not pile listeners
 * onto the transport's signal.
 *
 * The SDK passes one long-lived signal (its transport's AbortController) to every request;
 * undici adds an 'abort' listener to it per request and removes it only once that request is
 * garbage-collected, so a busy client (`warren mcp`, a test, a bench) holds thousands of them
 * (MaxListenersExceededWarning). Here each request gets a signal of its own, linked to the
 * shared one until its response body is read to the end, cancelled or failed: closing the
 * transport still aborts every request and stream in flight.
 */
export function isolatingFetch(base: FetchLike = fetch): FetchLike {
  return async (url, init) => {
    const shared = init?.signal;
    if (!shared || shared.aborted) return base(url, init);
    const own = new AbortController();
    const abort = () => own.abort(shared.reason);
    shared.addEventListener('abort', abort, { once: true });
    const unlink = () => shared.removeEventListener('abort', abort);
    let response: Response;
    try {
      response = await base(url, { ...init, signal: own.signal });
    } catch (error) {
      unlink();
      throw error;
    }
    if (!response.body) {
      unlink();
      return response;
    }
    // Read to the end (flush), or cancelled or failed (cancel, which a failed source calls too;
    // Node has it, TypeScript's lib does not yet).
    const ends: Transformer<Uint8Array, Uint8Array> & { cancel: () => void } = {
      flush: unlink,
      cancel: unlink,
    };
    const body = response.body.pipeThrough(new TransformStream(ends));
    return new Response(body, {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}
