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
 * - However it stops — end of input, SIGINT, SIGTERM (Claude Code sends SIGINT, then SIGTERM
 *   100 ms later, then SIGKILL at 500 ms), or a closed stdout — it ends its session on the
 *   daemon (`DELETE /mcp`) before it exits, waiting at most END_LIMIT_MS for a daemon that
 *   does not answer. A session left behind would hold one of the caller's capped slots until
 *   it idled out.
 */

/** Long enough for a blocking read to return on its own (the daemon bounds them well below this). */
const DRAIN_LIMIT_MS = 60_000;
/** The longest a stopping relay waits to learn its session id, and then for the DELETE. */
const END_LIMIT_MS = 2_000;

const SIGNALS = ['SIGINT', 'SIGTERM', 'SIGHUP'] as const;

/** `work`, or undefined once `ms` have passed. */
async function within<T>(work: Promise<T>, ms: number): Promise<T | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ms);
  });
  try {
    return await Promise.race([work, late]);
  } finally {
    clearTimeout(timer);
  }
}

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

  // What stops the relay: end of input (drain first), or a signal or a closed stdout (no one
  // is left to answer: end the session at once). Every signal joins the first stop.
  let stop: (how: 'eof' | 'now') => void = () => {};
  const stopped = new Promise<'eof' | 'now'>((resolve) => {
    stop = resolve;
  });
  const onEnd = () => stop('eof');
  const onSignal = () => stop('now');
  const onStdoutError = () => stop('now');
  process.stdin.once('end', onEnd);
  process.stdout.on('error', onStdoutError);
  for (const signal of SIGNALS) process.on(signal, onSignal);
  try {
    await upstream.start();
    await downstream.start();
    if ((await stopped) === 'eof') {
      // Drain: what was asked before stdin closed is answered, never aborted; a server that
      // does not answer is waited for DRAIN_LIMIT_MS in all.
      const drain = async () => {
        while (pumping) await pumping;
        if (outstanding.size > 0)
          await new Promise<void>((resolve) => {
            answered = resolve;
          });
      };
      await within(drain(), DRAIN_LIMIT_MS);
    } else {
      // An initialize still on its way holds the session id the DELETE needs.
      await within(pumping ?? Promise.resolve(), END_LIMIT_MS);
    }
    await within(
      upstream.terminateSession().catch(() => {}),
      END_LIMIT_MS,
    );
  } finally {
    // Closing aborts what is still in flight: that is the point, not an error worth printing.
    upstream.onerror = () => {};
    await upstream.close();
    await downstream.close();
    process.stdin.off('end', onEnd);
    process.stdout.off('error', onStdoutError);
    for (const signal of SIGNALS) process.off(signal, onSignal);
    // Nothing more is read: a parent that keeps our stdin open must not keep us alive.
    process.stdin.destroy();
  }
  return 0;
}
