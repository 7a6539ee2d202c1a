/**
 * A JSON-RPC error with no request to answer (JSON-RPC 2.0 allows `id: null`), on a line of
 * its own: what a unix-socket peer reads before the server closes on it.
 */
export const errorLine = (code: number, message: string): string =>
  `${JSON.stringify({ jsonrpc: '2.0', id: null, error: { code, message } })}\n`;
