import {
  Agent as HttpAgent,
  request as httpRequest,
  type IncomingHttpHeaders,
  type IncomingMessage,
} from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import type { Upstream } from '../../../kernel/gateway/upstreams.ts';

/**
 * The gateway's side of a model call: the agent's request re-sent to its session's provider
 * with the real key, over kept-alive connections (one pool per scheme, per HTTP server, so a
 * call costs no new TCP or TLS handshake once the first is made).
 */

/** Never forwarded upstream: the hop's own headers, and every credential the agent sent. */
const REQUEST_DROP = new Set([
  'host',
  'connection',
  'keep-alive',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'content-length',
  // The agent's credential is warren's, never the provider's.
  'authorization',
  'x-api-key',
  'cookie',
  // The gateway reads usage from the bytes: they must come uncompressed.
  'accept-encoding',
  'x-warren-zone',
]);

/** Not passed back: the hop's own (Node frames the answer itself). */
const RESPONSE_DROP = new Set(['connection', 'keep-alive', 'transfer-encoding']);

export function upstreamHeaders(given: IncomingHttpHeaders, up: Upstream, bodyBytes: number) {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(given)) {
    if (v !== undefined && !REQUEST_DROP.has(k)) out[k] = v;
  }
  out['content-length'] = String(bodyBytes);
  out['accept-encoding'] = 'identity';
  if (up.auth === 'bearer') out.authorization = `Bearer ${up.key}`;
  else out['x-api-key'] = up.key;
  return out;
}

export function responseHeaders(given: IncomingHttpHeaders): Record<string, string | string[]> {
  const out: Record<string, string | string[]> = {};
  for (const [k, v] of Object.entries(given)) {
    if (v !== undefined && !RESPONSE_DROP.has(k)) out[k] = v;
  }
  return out;
}

export interface UpstreamCall {
  method: string;
  /** The provider's path and query, e.g. `/v1/messages?beta=true`. */
  path: string;
  headers: IncomingHttpHeaders;
  body: Buffer;
  /** Aborts the call (the agent went away). */
  signal: AbortSignal;
}

export class UpstreamClient {
  private readonly http = new HttpAgent({ keepAlive: true });
  private readonly https = new HttpsAgent({ keepAlive: true });

  /** Send the call; resolves with the provider's answer, rejects when none came (connect failed). */
  send(up: Upstream, call: UpstreamCall): Promise<IncomingMessage> {
    const url = new URL(up.baseUrl.replace(/\/+$/, '') + call.path);
    const secure = url.protocol === 'https:';
    const send = secure ? httpsRequest : httpRequest;
    return new Promise((resolve, reject) => {
      const req = send(url, {
        method: call.method,
        headers: upstreamHeaders(call.headers, up, call.body.length),
        agent: secure ? this.https : this.http,
        signal: call.signal,
      });
      req.once('response', resolve);
      req.once('error', reject);
      req.end(call.body);
    });
  }

  close(): void {
    this.http.destroy();
    this.https.destroy();
  }
}
