/**
 * Two builds in one process: `npx tsx bench/same-process.ts --base <checkout>` serves this
 * checkout's warren and the base checkout's side by side in this process, connects one MCP
 * client to each, and times `ipc_write` round trips on both by turns, in blocks.
 *
 * Why: `bench/compare.ts` runs each build in its own process, so a row there also measures the
 * process (its heap, its layout, the machine's moment). Here both builds share the heap, the
 * JIT's warm-up, the garbage collector and the machine's noise, so what differs is the code on
 * the call's path. The client side (the MCP SDK, undici) is this checkout's for both.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { isolatingFetch } from '../src/surfaces/mcp/client-fetch.ts';
import { SocketClientTransport } from '../test/helpers/mcp.ts';
import { percentile } from './lib/stats.ts';

const USAGE = [
  'usage: npx tsx bench/same-process.ts --base <checkout> [--rounds N] [--block N] [--transport socket|http]',
  '',
  'Serves this checkout and the base checkout in one process and times MCP ipc_write round trips',
  'on both by turns: --rounds blocks of --block calls a side (default 20 × 500) after 2,000 warm-up',
  'calls each, over the zone unix socket (default) or Streamable HTTP. The base needs its',
  'node_modules (npm ci there).',
].join('\n');

/** Where a checkout's `serve` lives: `src/app/server.ts` now, `src/server.ts` before the layout change. */
function serverModule(checkout: string): string {
  for (const rel of ['src/app/server.ts', 'src/server.ts']) {
    const path = join(checkout, rel);
    if (existsSync(path)) return pathToFileURL(path).href;
  }
  throw new Error(`${checkout} has no src/app/server.ts or src/server.ts`);
}

interface Side {
  name: string;
  client: Client;
  fd: number;
  latencies: number[];
  stop: () => Promise<void>;
  dir: string;
}

async function start(name: string, checkout: string, transport: string): Promise<Side> {
  const { serve } = (await import(serverModule(checkout))) as {
    serve: (
      opts: Record<string, unknown>,
      out: { write: () => boolean },
    ) => Promise<{ url: string; sockets: { paths(): string[] }; stop(): Promise<void> }>;
  };
  const dir = mkdtempSync(join(tmpdir(), `warren-bench-same-${name}-`));
  const running = await serve(
    // A build that predates `logLevel` ignores it and logs its start at info.
    { host: '127.0.0.1', port: 0, dataDir: dir, durability: 'process', demo: false, logLevel: 'warn' },
    { write: () => true },
  );
  const key = readFileSync(join(dir, 'operator.key'), 'utf8').trim();
  const wire: Transport =
    transport === 'http'
      ? new StreamableHTTPClientTransport(new URL(`${running.url}/mcp`), {
          requestInit: { headers: { authorization: `Bearer ${key}` } },
          fetch: isolatingFetch(),
        })
      : new SocketClientTransport(running.sockets.paths()[0]!);
  const client = new Client({ name: 'bench', version: '0' });
  await client.connect(wire);
  const room = (await client.callTool({
    name: 'streams_create',
    arguments: { name: 'bench', selfEcho: false },
  })) as unknown as { structuredContent: { fd: number } };
  return {
    name,
    client,
    fd: room.structuredContent.fd,
    latencies: [],
    stop: () => running.stop(),
    dir,
  };
}

async function main(): Promise<void> {
  const { values } = parseArgs({
    options: {
      base: { type: 'string' },
      rounds: { type: 'string', default: '20' },
      block: { type: 'string', default: '500' },
      transport: { type: 'string', default: 'socket' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    process.stdout.write(`${USAGE}\n`);
    return;
  }
  const rounds = Number(values.rounds);
  const block = Number(values.block);
  if (!values.base || !(rounds >= 1) || !(block >= 1) || !['socket', 'http'].includes(values.transport)) {
    throw new Error(USAGE);
  }
  const here = resolve(fileURLToPath(new URL('..', import.meta.url)));
  const sides: Side[] = [];
  try {
    sides.push(await start('base', resolve(values.base), values.transport));
    sides.push(await start('now', here, values.transport));
    let n = 0;
    const call = async (side: Side, timed: boolean) => {
      const t = performance.now();
      const r = (await side.client.callTool({
        name: 'ipc_write',
        arguments: { fd: side.fd, message: `message ${++n} of the bench, a line of ordinary length` },
      })) as { isError?: boolean; content: Array<{ text?: string }> };
      if (timed) side.latencies.push(performance.now() - t);
      if (r.isError) throw new Error(`${side.name}: ipc_write failed: ${r.content[0]?.text}`);
    };
    for (const side of sides) for (let i = 0; i < 2000; i++) await call(side, false);
    for (let r = 0; r < rounds; r++) {
      // Alternate which side goes first, so neither always runs in the other's wake.
      for (const side of r % 2 === 0 ? sides : [...sides].reverse()) {
        for (let i = 0; i < block; i++) await call(side, true);
      }
    }
    const stats = sides.map((s) => {
      const sorted = [...s.latencies].sort((a, b) => a - b);
      return {
        p50: percentile(sorted, 0.5),
        p90: percentile(sorted, 0.9),
        p99: percentile(sorted, 0.99),
        mean: s.latencies.reduce((a, b) => a + b, 0) / s.latencies.length,
      };
    });
    const [b, h] = stats as [(typeof stats)[0], (typeof stats)[0]];
    console.log(`MCP ipc_write round trip over ${values.transport}, ${rounds} × ${block} calls a side, ms`);
    console.log('stat  base      now       cost');
    for (const k of ['p50', 'p90', 'p99', 'mean'] as const) {
      console.log(
        `${k.padEnd(5)} ${b[k].toFixed(4).padEnd(9)} ${h[k].toFixed(4).padEnd(9)} ${(h[k] / b[k]).toFixed(3)}`,
      );
    }
  } finally {
    for (const side of sides) {
      await side.client.close().catch(() => {});
      await side.stop();
      rmSync(side.dir, { recursive: true, force: true });
    }
  }
}

// Bad input and a base that cannot be served say so in a line, not a stack.
await main().catch((error: unknown) => {
  process.stderr.write(`same-process: ${(error as Error).message}\n`);
  process.exitCode = 2;
});
