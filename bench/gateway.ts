/**
 * The model gateway's overhead per request. Run this file on its own (`npx tsx
 * bench/gateway.ts`) to print its rows; `npm run bench -- gateway` runs it in the table.
 *
 * The mock Anthropic API (test/helpers/mock-anthropic.ts) and the mock OpenAI Responses API
 * (test/helpers/mock-openai.ts) on loopback, each called by one client two ways in the same
 * run, request for request interleaved so both see the same machine: directly, and through
 * warren's `/v1/gateway/<provider>` with a session's credential (warren on SQLite, its HTTP
 * server in this process). For a streamed answer (SSE) and a JSON one:
 * the gateway's added time at p50 and p99, to the first byte of the answer and to its end.
 * The goal (issue 27) is at most 1 ms added at p50. A budgeted session's calls cost one more
 * read before the call, and end only once their usage is recorded (its row notes that).
 */
import { Agent, request } from 'node:http';
import { defaultGatewayConfig } from '../src/kernel/gateway/config.ts';
import { buildHttpServer } from '../src/surfaces/http/server.ts';
import { Warren } from '../src/syscalls/warren.ts';
import { startMockAnthropic } from '../test/helpers/mock-anthropic.ts';
import { startMockOpenAI } from '../test/helpers/mock-openai.ts';
import { op } from './lib/sessions.ts';
import { load1, round, summary } from './lib/stats.ts';
import { tempDir } from './lib/tempdir.ts';
import type { BenchRow } from './store.ts';

const N = 600;
const WARMUP = 50;
const BODY = JSON.stringify({
  model: 'claude-sonnet-4-5',
  max_tokens: 1024,
  messages: [{ role: 'user', content: 'x'.repeat(2000) }],
});
const OPENAI_BODY = JSON.stringify({
  model: 'gpt-5',
  input: [{ type: 'message', role: 'user', content: 'x'.repeat(2000) }],
});
const ANSWER = 'a short answer of a few words';

/** One provider's side of the bench: its mock, its paths, how its clients send a key. */
interface Side {
  provider: 'anthropic' | 'openai';
  body: string;
  start(): Promise<{ baseUrl: string; close(): Promise<void> }>;
  /** The path of a model call under a base URL (the mock's, or the gateway's for the provider). */
  path: string;
  gatewayBase: string;
  auth(key: string): Record<string, string>;
}

const SIDES: Side[] = [
  {
    provider: 'anthropic',
    body: BODY,
    start: async () => {
      const m = await startMockAnthropic(
        () => ({ text: ANSWER, usage: { input_tokens: 500, output_tokens: 8 } }),
        { sideRequests: 'script' },
      );
      return { baseUrl: m.url, close: () => m.close() };
    },
    path: '/v1/messages',
    gatewayBase: '/v1/gateway/anthropic',
    auth: (key) => ({ 'x-api-key': key }),
  },
  {
    provider: 'openai',
    body: OPENAI_BODY,
    start: async () => {
      const m = await startMockOpenAI(() => ({
        text: ANSWER,
        usage: { input_tokens: 500, output_tokens: 8 },
      }));
      return { baseUrl: m.baseUrl, close: () => m.close() };
    },
    path: '/responses',
    gatewayBase: '/v1/gateway/openai/v1',
    auth: (key) => ({ authorization: `Bearer ${key}` }),
  },
];

interface Timing {
  first: number;
  end: number;
}

/** One POST over a kept-alive connection: ms to the answer's first byte and to its end. */
function time(agent: Agent, url: string, body: string, auth: Record<string, string>): Promise<Timing> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    let first = 0;
    const req = request(
      url,
      { method: 'POST', agent, headers: { 'content-type': 'application/json', ...auth } },
      (res) => {
        res.on('data', () => {
          if (first === 0) first = performance.now() - t0;
        });
        res.on('end', () => {
          if (res.statusCode !== 200) reject(new Error(`${url}: ${res.statusCode}`));
          else resolve({ first, end: performance.now() - t0 });
        });
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function measure(side: Side, budgeted: boolean) {
  using tmp = tempDir();
  const mock = await side.start();
  const warren = await Warren.open({ dataDir: tmp.dir });
  const app = await buildHttpServer(warren, { webRoot: null });
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const url = await app.listen({ host: '127.0.0.1', port: 0 });
    const spawned = (await warren.call(op, 'ipc_spawn', {
      runtime: 'script',
      script: { steps: [{ listen: {} }] },
      ...(budgeted ? { budget: { inputTokens: 1e12 } } : {}),
    })) as { session: { id: string } };
    const id = spawned.session.id;
    warren.kernel.gateway.upstreams.hold(
      id,
      0,
      { zone: 'default', scope: budgeted ? [id] : [] },
      side.provider,
      {
        baseUrl: mock.baseUrl,
        key: 'sk-bench',
        auth: side.provider === 'anthropic' ? 'x-api-key' : 'bearer',
      },
    );
    const token = warren.tokens.mint(id, 0);
    const out: Record<string, { direct: Timing[]; gateway: Timing[] }> = {};
    for (const mode of ['SSE', 'JSON'] as const) {
      const body = mode === 'SSE' ? side.body.replace(/}$/, ',"stream":true}') : side.body;
      const direct: Timing[] = [];
      const gateway: Timing[] = [];
      for (let i = 0; i < WARMUP + N; i++) {
        // Alternate which goes first, so neither always meets a warmer machine.
        const pair = [
          () => time(agent, `${mock.baseUrl}${side.path}`, body, side.auth('sk-bench')),
          () => time(agent, `${url}${side.gatewayBase}${side.path}`, body, side.auth(token)),
        ];
        const [a, b] = i % 2 === 0 ? pair : [pair[1]!, pair[0]!];
        const ra = await a!();
        const rb = await b!();
        if (i < WARMUP) continue;
        const [d, g] = i % 2 === 0 ? [ra, rb] : [rb, ra];
        direct.push(d);
        gateway.push(g);
      }
      out[mode] = { direct, gateway };
    }
    return out;
  } finally {
    agent.destroy();
    await app.close();
    await warren.close();
    await mock.close();
  }
}

/** Anthropic unbudgeted and budgeted; OpenAI unbudgeted (its budget check is the same code). */
async function gatewayOverhead(): Promise<BenchRow[]> {
  const rows: BenchRow[] = [];
  const runs = [
    [SIDES[0]!, false],
    [SIDES[0]!, true],
    [SIDES[1]!, false],
  ] as const;
  for (const [side, budgeted] of runs) {
    const measured = await measure(side, budgeted);
    for (const [mode, { direct, gateway }] of Object.entries(measured)) {
      for (const what of ['first', 'end'] as const) {
        const d = summary(direct.map((t) => t[what]));
        const g = summary(gateway.map((t) => t[what]));
        const to = what === 'first' ? 'first byte' : 'whole answer';
        // Anthropic's rows keep their names (their history); OpenAI's say so.
        const api = side.provider === 'openai' ? ', OpenAI' : '';
        const label = `gateway added${api}, ${mode}, to ${to}${budgeted ? ', budgeted' : ''}`;
        const note = `direct p50 ${round(d.p50, 3)} ms p99 ${round(d.p99, 3)}; through the gateway p50 ${round(g.p50, 3)} p99 ${round(g.p99, 3)}; added at p99 ${round(g.p99 - d.p99, 3)} ms; ${N} requests each, one connection, SQLite${budgeted ? '; budgeted: a read before the call, the end after the usage is written' : ''}; load ${load1()}`;
        rows.push({
          name: `${label}, p50`,
          value: round(g.p50 - d.p50, 3),
          unit: 'ms',
          ...(budgeted ? {} : { max: 1 }),
          note,
        });
      }
    }
  }
  return rows;
}

/**
 * 20 calls at once on one key against a provider that serves 5 at a time (100 ms each) and
 * answers 429 past that (`retry-after: 0.05`): through the gateway with a concurrency of 5
 * (nothing is refused), and with no concurrency limit (429s held and retried). Completed
 * calls and the total time against the ideal the provider's limit allows (4 rounds of 100 ms).
 */
async function gatewayLimiter(): Promise<BenchRow[]> {
  const CALLS = 20;
  const SERVES = 5;
  const MS = 100;
  const ideal = Math.ceil(CALLS / SERVES) * MS;
  const rows: BenchRow[] = [];
  for (const concurrency of [SERVES, 0]) {
    using tmp = tempDir();
    const mock = await startMockAnthropic(() => ({ text: 'ok', delayMs: MS }), {
      sideRequests: 'script',
      capacity: { concurrent: SERVES, retryAfterS: 0.05 },
    });
    const warren = await Warren.open({
      dataDir: tmp.dir,
      kernel: { gateway: { ...defaultGatewayConfig(), concurrency, retries: 20, maxRetryWaitMs: 30_000 } },
    });
    const app = await buildHttpServer(warren, { webRoot: null });
    const agent = new Agent({ keepAlive: true });
    try {
      const url = await app.listen({ host: '127.0.0.1', port: 0 });
      const spawned = (await warren.call(op, 'ipc_spawn', {
        runtime: 'script',
        script: { steps: [{ listen: {} }] },
      })) as { session: { id: string } };
      const id = spawned.session.id;
      warren.kernel.gateway.upstreams.hold(id, 0, { zone: 'default', scope: [] }, 'anthropic', {
        baseUrl: mock.url,
        key: 'sk-bench',
        auth: 'x-api-key',
      });
      const token = warren.tokens.mint(id, 0);
      const t0 = performance.now();
      const done = await Promise.allSettled(
        Array.from({ length: CALLS }, () =>
          time(agent, `${url}/v1/gateway/anthropic/v1/messages`, BODY, { 'x-api-key': token }),
        ),
      );
      const took = performance.now() - t0;
      const ok = done.filter((d) => d.status === 'fulfilled').length;
      const s = warren.kernel.gateway.limiters.summary();
      rows.push({
        name: `gateway limiter, ${CALLS} calls on a key served ${SERVES} at a time, ${concurrency ? `concurrency ${concurrency}` : 'no concurrency limit, 429s retried'}`,
        value: round(took, 0),
        unit: 'ms',
        baseline: ideal,
        ratio: round(took / ideal),
        note: `${ok} of ${CALLS} completed; provider refused ${mock.load.refused}, most at once ${mock.load.most}; gateway queued ${s.queuedTotal}, retried ${s.retries}; ideal ${ideal} ms (${CALLS / SERVES} rounds of ${MS} ms); load ${load1()}`,
      });
    } finally {
      agent.destroy();
      await app.close();
      await warren.close();
      await mock.close();
    }
  }
  return rows;
}

export const gatewayBenches = { gatewayOverhead, gatewayLimiter };

if (import.meta.url === `file://${process.argv[1]}`) {
  const { formatRows } = await import('./store.ts');
  console.log(formatRows([...(await gatewayOverhead()), ...(await gatewayLimiter())]));
}
