import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { isolatingFetch } from '../mcp/client-fetch.ts';
import type { OutputStream } from './types.ts';

/**
 * The relay behind `warren mcp`: MCP on stdio <-> the daemon's `/mcp` (Streamable HTTP).
 *
 * - Until the daemon has answered the first message (the `initialize` that gives the
 *   session id), later messages wait behind it, in order: sent without the session id,
 *   the daemon would refuse them.
 * - When stdin ends, requests already sent are answered before the relay closes (bounded
 *   by DRAIN_LIMIT_MS): a client that writes and hangs up still gets its answers.
 */

/** Long enough for a blocking read to return on its own (the daemon bounds them well below this). */
const DRAIN_LIMIT_MS = 60_000;

type Id = string | number;
const requestId = (m: JSONRPCMessage): Id | undefined =>
  'method' in m && 'id' in m ? (m.id as Id) : undefined;
const responseId = (m: JSONRPCMessage): Id | undefined =>
  !('method' in m) && 'id' in m ? (m.id as Id) : undefined;

export async function bridge(endpoint: URL, headers: Record<string, string>, stderr: OutputStream) {
  const upstream = new StreamableHTTPClientTransport(endpoint, {
    requestInit: { headers },
    // A long-lived relay: its requests must not pile listeners on the transport's signal.
    fetch: isolatingFetch(),
  });
  const downstream = new StdioServerTransport(process.stdin, process.stdout);
  /** Requests sent upstream and not answered yet. */
  const outstanding = new Set<Id>();
  let answered: () => void = () => {};

  const reply = (message: JSONRPCMessage) => {
    const id = responseId(message);
    if (id !== undefined && outstanding.delete(id) && outstanding.size === 0) answered();
    return downstream.send(message);
  };

  const forward = async (message: JSONRPCMessage): Promise<void> => {
    const id = requestId(message);
    if (id !== undefined) outstanding.add(id);
    try {
      await upstream.send(message);
    } catch (error) {
      // A request that cannot reach warren still gets an answer: the client must not hang.
      if (id !== undefined) {
        await reply({
          jsonrpc: '2.0',
          id,
          error: { code: -32000, message: `warren at ${endpoint.origin}: ${(error as Error).message}` },
        });
      }
    }
  };

  // Messages that arrive before the session exists, in arrival order.
  const waiting: JSONRPCMessage[] = [];
  let pumping: Promise<void> | undefined;
  const pump = async () => {
    while (waiting.length > 0) {
      if (upstream.sessionId !== undefined) {
        // Connected: the rest go at once (in order), so a blocking read cannot hold up the others.
        for (const m of waiting.splice(0)) void forward(m);
        return;
      }
      await forward(waiting.shift()!);
    }
  };
  downstream.onmessage = (message) => {
    if (upstream.sessionId !== undefined && pumping === undefined) {
      void forward(message);
      return;
    }
    waiting.push(message);
    pumping ??= pump().finally(() => {
      pumping = undefined;
    });
  };
  upstream.onmessage = (message) => {
    const result = (message as { result?: { protocolVersion?: string } }).result;
    if (result?.protocolVersion) upstream.setProtocolVersion(result.protocolVersion);
    void reply(message);
  };
  upstream.onerror = (error) => stderr.write(`warren mcp: ${error.message}\n`);

  const stdinEnded = new Promise<void>((resolve) => process.stdin.once('end', resolve));
  await upstream.start();
  await downstream.start();
  await stdinEnded;

  // Drain: what was asked before stdin closed is answered, never aborted.
  while (pumping) await pumping;
  if (outstanding.size > 0) {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, DRAIN_LIMIT_MS);
      answered = () => {
        clearTimeout(timer);
        resolve();
      };
    });
  }
  await upstream.terminateSession().catch(() => {});
  await upstream.close();
  await downstream.close();
  return 0;
}
