import { type ChildProcess, spawn } from 'node:child_process';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';

const BIN = fileURLToPath(new URL('../../bin/warren.js', import.meta.url));

/** A real `warren serve` child on a data dir, as a user runs it (port 0: any free port). */
export interface ServerChild {
  proc: ChildProcess;
  /** Milliseconds from spawning the process to the first 200 from /healthz, or undefined if it did not come within the bound. */
  readyMs: number | undefined;
  url: string | undefined;
  /** SIGKILL, then wait for the process to be gone. */
  kill(): Promise<void>;
}

/**
 * Start `node bin/warren.js serve --port 0 --data-dir dir` and poll its /healthz every
 * 10 ms until it answers 200 or `boundMs` passes. The URL comes from its first stdout line.
 */
export async function startServer(dataDir: string, boundMs: number): Promise<ServerChild> {
  const t0 = performance.now();
  const proc = spawn(process.execPath, [BIN, 'serve', '--port', '0', '--data-dir', dataDir], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, WARREN_HOST: '127.0.0.1' },
  });
  let url: string | undefined;
  let stderr = '';
  proc.stdout!.setEncoding('utf8').on('data', (s: string) => {
    url ??= /listening on (\S+)/.exec(s)?.[1];
  });
  proc.stderr!.setEncoding('utf8').on('data', (s: string) => {
    stderr = (stderr + s).slice(-2000);
  });
  const exited = new Promise<void>((r) => proc.once('exit', () => r()));
  let gone = false;
  void exited.then(() => {
    gone = true;
  });
  const kill = async () => {
    if (!gone) proc.kill('SIGKILL');
    await exited;
  };
  let readyMs: number | undefined;
  while (performance.now() - t0 < boundMs && !gone) {
    if (url && (await healthy(url))) {
      readyMs = performance.now() - t0;
      break;
    }
    await sleep(10);
  }
  if (gone && readyMs === undefined) throw new Error(`warren serve exited before serving: ${stderr.trim()}`);
  return { proc, readyMs, url, kill };
}

async function healthy(url: string): Promise<boolean> {
  try {
    const res = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(1000) });
    await res.arrayBuffer();
    return res.ok;
  } catch {
    return false;
  }
}

/** Resident set of a live process, from /proc (Linux); undefined elsewhere. */
export async function rssOf(pid: number): Promise<number | undefined> {
  try {
    const { readFile } = await import('node:fs/promises');
    const status = await readFile(`/proc/${pid}/status`, 'utf8');
    const kb = /VmRSS:\s+(\d+) kB/.exec(status)?.[1];
    return kb ? Number(kb) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Restart to serving after a crash: start the server (and let it settle `settleMs`), SIGKILL
 * it, start it again and time until /healthz answers. Each start is bounded by `boundMs`.
 * Returns the restarts' times (undefined = no answer within the bound).
 */
export async function restartToServing(
  dataDir: string,
  opts: { restarts: number; boundMs: number; settleMs?: number },
): Promise<{ first: number | undefined; restarts: Array<number | undefined> }> {
  let server = await startServer(dataDir, opts.boundMs);
  const first = server.readyMs;
  const restarts: Array<number | undefined> = [];
  try {
    for (let r = 0; r < opts.restarts; r++) {
      await sleep(opts.settleMs ?? 500);
      await server.kill();
      server = await startServer(dataDir, opts.boundMs);
      restarts.push(server.readyMs);
    }
  } finally {
    await server.kill();
  }
  return { first, restarts };
}
