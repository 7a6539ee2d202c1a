/**
 * CLI start: how long `bin/warren.js` takes to do its job as a real child process, against
 * `node -e 0` measured in the same run, interleaved (one baseline run, one warren run, …) so
 * the machine's load hits both sides alike. Medians of RUNS each.
 *
 * - `warren --help` and `warren ps` (against a server this bench starts and stops): wall
 *   time to exit. Goal: ≤ 3× `node -e 0`.
 * - `warren serve` on a fresh data dir: spawn → "warren listening on" on stdout. Goal ≤ 500 ms.
 * - `warren mcp`: spawn with `initialize` written at once → its answer on stdout.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { startServer } from '../test/helpers/server.ts';
import type { BenchRow } from './store.ts';

/** WARREN_BENCH_BIN measures another checkout's bin/warren.js (a before/after pair). */
const BIN = process.env.WARREN_BENCH_BIN ?? fileURLToPath(new URL('../bin/warren.js', import.meta.url));
/** What bin/warren.js runs: the build when there is one (`npm run bench` builds first). */
const RUNS_FROM = existsSync(new URL('../dist/main.js', pathToFileURL(BIN))) ? 'dist/' : 'sources via tsx';
const RUNS = 7;
/** Nothing here should take long; a child that does is killed and the bench fails. */
const CHILD_LIMIT_MS = 30_000;

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = s.length >> 1;
  return s.length % 2 ? s[mid]! : (s[mid - 1]! + s[mid]!) / 2;
};
const round = (n: number, digits = 1) => Number(n.toFixed(digits));

function tempDir(): { dir: string; [Symbol.dispose](): void } {
  const dir = mkdtempSync(join(tmpdir(), 'warren-bench-cli-'));
  return { dir, [Symbol.dispose]: () => rmSync(dir, { recursive: true, force: true }) };
}

interface Timed {
  ms: number;
  stdout: string;
}

/**
 * Runs `node <args>` and resolves when `done(stdout)` says so (default: at exit, status 0),
 * with the wall time from spawn. The child is always gone when this settles.
 */
function timeChild(
  args: string[],
  opts: {
    env?: NodeJS.ProcessEnv;
    input?: string;
    done?: (stdout: string) => boolean;
    /** Keep the child this long after `done` before stopping it (the time is taken at `done`). */
    lingerMs?: number;
  } = {},
): Promise<Timed> {
  return new Promise((resolve, reject) => {
    const t0 = performance.now();
    const child = spawn(process.execPath, args, {
      stdio: ['pipe', 'pipe', 'pipe'],
      env: { ...process.env, ...opts.env },
    });
    let out = '';
    let err = '';
    let settled = false;
    const finish = (error?: Error) => {
      if (settled) return;
      settled = true;
      const ms = performance.now() - t0;
      clearTimeout(timer);
      const result = { ms, stdout: out };
      if (child.exitCode === null && child.signalCode === null) {
        child.once('exit', () => (error ? reject(error) : resolve(result)));
        setTimeout(
          () => {
            child.stdin.end();
            child.kill('SIGTERM');
          },
          error ? 0 : (opts.lingerMs ?? 0),
        );
      } else if (error) reject(error);
      else resolve(result);
    };
    const timer = setTimeout(
      () => finish(new Error(`node ${args.join(' ')}: no answer in ${CHILD_LIMIT_MS} ms\n${err}`)),
      CHILD_LIMIT_MS,
    );
    child.stdout.setEncoding('utf8').on('data', (c: string) => {
      out += c;
      if (opts.done?.(out)) finish();
    });
    child.stderr.setEncoding('utf8').on('data', (c: string) => {
      err += c;
    });
    child.once('error', (e) => finish(e));
    child.once('exit', (code, signal) => {
      if (opts.done) finish(new Error(`node ${args.join(' ')} exited (${code ?? signal}) early:\n${err}`));
      else if (code === 0) finish();
      else finish(new Error(`node ${args.join(' ')} exited with ${code ?? signal}:\n${err}`));
    });
    if (opts.input !== undefined) child.stdin.write(opts.input);
  });
}

/**
 * RUNS pairs of (baseline, subject), interleaved; medians of each side. One untimed run of
 * `warmUp` (default: the subject) first: the page cache, and the bundles' V8 code cache.
 */
async function paired(
  subject: () => Promise<number>,
  warmUp: () => Promise<unknown> = subject,
): Promise<{ base: number; value: number }> {
  const base: number[] = [];
  const value: number[] = [];
  await timeChild(['-e', '0']); // warm the page cache for node itself
  await warmUp();
  for (let i = 0; i < RUNS; i++) {
    base.push((await timeChild(['-e', '0'])).ms);
    value.push(await subject());
  }
  return { base: median(base), value: median(value) };
}

const startRow = (name: string, r: { base: number; value: number }, goal?: number): BenchRow => ({
  name,
  value: round(r.value),
  unit: 'ms',
  baseline: round(r.base),
  ratio: round(r.value / r.base, 2),
  ...(goal !== undefined ? { max: round(r.base * goal) } : {}),
  note: `median of ${RUNS}, ${RUNS_FROM}; baseline node -e 0${goal !== undefined ? `; goal ≤ ${goal}× baseline` : ''}`,
});

const INITIALIZE = `${JSON.stringify({
  jsonrpc: '2.0',
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'bench', version: '0' } },
})}\n`;

/** Answered `initialize` with a result (not an error) on stdout. */
const initializeAnswered = (stdout: string): boolean => {
  for (const line of stdout.split('\n')) {
    if (!line.trim()) continue;
    const msg = JSON.parse(line) as { id?: unknown; result?: unknown; error?: { message?: string } };
    if (msg.id !== 1) continue;
    if (msg.error) throw new Error(`warren mcp answered initialize with an error: ${msg.error.message}`);
    return true;
  }
  return false;
};

export async function cliStart(): Promise<BenchRow[]> {
  using tmp = tempDir();
  const rows: BenchRow[] = [];
  rows.push(
    startRow('cli: warren --help', await paired(async () => (await timeChild([BIN, '--help'])).ms), 3),
  );

  const server = await startServer({ dataDir: join(tmp.dir, 'server') });
  try {
    const env = { WARREN_URL: server.url, WARREN_API_KEY: server.key };
    rows.push(
      startRow(
        'cli: warren ps (running server)',
        await paired(async () => (await timeChild([BIN, 'ps'], { env })).ms),
        3,
      ),
    );
    const mcp = (lingerMs?: number) =>
      timeChild([BIN, 'mcp'], {
        env: { ...env, WARREN_URL: server.url },
        input: INITIALIZE,
        done: initializeAnswered,
        ...(lingerMs ? { lingerMs } : {}),
      });
    // The warm-up relay lives on for a second, as a client's does, so it writes its code cache.
    const mcpStart = await paired(
      async () => (await mcp()).ms,
      () => mcp(1_000),
    );
    rows.push({
      ...startRow('cli: warren mcp → first initialize answer', mcpStart),
      note: `median of ${RUNS}, ${RUNS_FROM}; initialize written at spawn`,
    });
  } finally {
    await server.stop();
  }

  let n = 0;
  const serve = await paired(async () => {
    const dataDir = join(tmp.dir, `serve-${n++}`);
    const listening = (out: string) => out.includes('warren listening on');
    return (await timeChild([BIN, 'serve', '--port', '0', '--data-dir', dataDir], { done: listening })).ms;
  });
  rows.push({
    ...startRow('cli: warren serve → listening (fresh data dir)', serve),
    max: 500,
    note: `median of ${RUNS}, ${RUNS_FROM}; spawn until "warren listening on"`,
  });
  return rows;
}

export const cliBenches = { cliStart };

if (import.meta.url === `file://${process.argv[1]}`) {
  const { formatRows } = await import('./store.ts');
  const { loadavg } = await import('node:os');
  const before = loadavg().map((l) => l.toFixed(2));
  console.log(formatRows(await cliStart()));
  console.log(
    `load average at start ${before.join(' ')}, at end ${loadavg()
      .map((l) => l.toFixed(2))
      .join(' ')}`,
  );
}
