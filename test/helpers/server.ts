/**
 * A real warren server in a child process (`bin/warren.js serve`), for tests that need
 * one: a crash, a restart, the CLI against a live daemon. Always stopped by the test.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { reapOnExit } from './reaper.ts';

export const WARREN_BIN = fileURLToPath(new URL('../../bin/warren.js', import.meta.url));
const SRC = fileURLToPath(new URL('../../src/', import.meta.url));
const BUILD = fileURLToPath(new URL('../../dist/main.js', import.meta.url));

/**
 * The environment for a `bin/warren.js` child. `npm test` builds first; a test file run on
 * its own after an edit would otherwise test a stale dist/, so then the child runs the sources.
 */
export function binEnv(): NodeJS.ProcessEnv {
  let built: number;
  try {
    built = statSync(BUILD).mtimeMs;
  } catch {
    return { WARREN_FROM_SOURCE: '1' };
  }
  const newest = readdirSync(SRC, { recursive: true, encoding: 'utf8' }).reduce(
    (max, f) => Math.max(max, statSync(join(SRC, f)).mtimeMs),
    0,
  );
  return newest > built ? { WARREN_FROM_SOURCE: '1' } : {};
}

/** How long a graceful stop may take before it is forced (and the stop fails). */
const GRACEFUL_STOP_MS = 10_000;

export interface ServerProcess {
  child: ChildProcess;
  url: string;
  key: string;
  output(): string;
  /** Graceful stop (SIGTERM); SIGKILLed and rejected if it is not done within GRACEFUL_STOP_MS. */
  stop(): Promise<void>;
  /** The crash: SIGKILL, no goodbye. */
  crash(): Promise<void>;
  api<T = unknown>(method: string, path: string, body?: unknown): Promise<{ status: number; json: T }>;
}

export async function startServer(opts: {
  dataDir: string;
  db?: string;
  args?: string[];
  env?: NodeJS.ProcessEnv;
}): Promise<ServerProcess> {
  const args = [
    WARREN_BIN,
    'serve',
    '--port',
    '0',
    '--data-dir',
    opts.dataDir,
    ...(opts.db ? ['--db', opts.db] : []),
    ...(opts.args ?? []),
  ];
  const child = spawn(process.execPath, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    // Unconfined unless a test says otherwise (test/runtimes/containment.test.ts confines its own).
    env: { ...process.env, ...binEnv(), WARREN_CONTAINMENT: 'none', ...opts.env },
  });
  reapOnExit(child);
  let out = '';
  child.stdout!.setEncoding('utf8').on('data', (c: string) => {
    out += c;
  });
  child.stderr!.setEncoding('utf8').on('data', (c: string) => {
    out += c;
  });
  const url = await new Promise<string>((resolve, reject) => {
    // Generous: a loaded CI machine can take long to load the bundle; a healthy start takes ~1 s.
    const timer = setTimeout(() => reject(new Error(`server did not start in 60 s:\n${out}`)), 60_000);
    const check = () => {
      const m = /warren listening on (http:\/\/\S+)/.exec(out);
      if (m) {
        clearTimeout(timer);
        resolve(m[1]!);
      }
    };
    child.stdout!.on('data', check);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`server exited with ${code} before listening:\n${out}`));
    });
  });
  const key = readFileSync(join(opts.dataDir, 'operator.key'), 'utf8').trim();
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const stopWith = async (sig: NodeJS.Signals) => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill(sig);
    let killed = false;
    const t = setTimeout(() => {
      killed = true;
      child.kill('SIGKILL');
    }, GRACEFUL_STOP_MS);
    await exited;
    clearTimeout(t);
    // A graceful stop that had to be forced is a hang in the server's close, not a slow test.
    if (killed) throw new Error(`the server did not stop within ${GRACEFUL_STOP_MS} ms of ${sig}: SIGKILLed`);
  };
  return {
    child,
    url,
    key,
    output: () => out,
    stop: () => stopWith('SIGTERM'),
    crash: () => stopWith('SIGKILL'),
    async api<T>(method: string, path: string, body?: unknown) {
      const res = await fetch(url + path, {
        method,
        headers: {
          authorization: `Bearer ${key}`,
          ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        },
        ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
      });
      return { status: res.status, json: (await res.json()) as T };
    },
  };
}
