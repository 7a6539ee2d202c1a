/**
 * Real `warren runner` processes against a real `warren serve`: another process on this host
 * stands for another host. Everything listens on loopback and is killed by the test.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { readdirSync, readFileSync, rmSync } from 'node:fs';
import { after } from 'node:test';
import { fileURLToPath } from 'node:url';
import { reapOnExit } from '../helpers/reaper.ts';
import { binEnv, type ServerProcess, WARREN_BIN } from '../helpers/server.ts';

export const ECHO_AGENT = fileURLToPath(new URL('../fixtures/runner-echo.mjs', import.meta.url));

// The runner must not pick up a developer's own settings.
const cleanEnv = () =>
  Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('WARREN_')));

export interface RunnerProcess {
  child: ChildProcess;
  output(): string;
  /** Resolves with the exit code (null when killed by a signal). */
  exited: Promise<number | null>;
  stop(): Promise<void>;
  crash(): Promise<void>;
}

/** Start `warren runner`; with `connected` (default) wait until the server welcomed it. */
export async function startRunner(opts: {
  url: string;
  token: string;
  name?: string;
  runtimes?: string;
  cwdRoot?: string;
  connected?: boolean;
}): Promise<RunnerProcess> {
  const args = [WARREN_BIN, 'runner', '--server', opts.url, '--token', opts.token];
  if (opts.name) args.push('--name', opts.name);
  if (opts.runtimes) args.push('--runtimes', opts.runtimes);
  if (opts.cwdRoot) args.push('--cwd-root', opts.cwdRoot);
  const child = spawn(process.execPath, args, {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...cleanEnv(), ...binEnv() },
  });
  reapOnExit(child);
  let out = '';
  for (const s of [child.stdout!, child.stderr!]) s.setEncoding('utf8').on('data', (c: string) => (out += c));
  const exited = new Promise<number | null>((r) => child.once('exit', (code) => r(code)));
  const stopWith = async (sig: NodeJS.Signals) => {
    if (child.exitCode !== null || child.signalCode !== null) return;
    child.kill(sig);
    const t = setTimeout(() => child.kill('SIGKILL'), 10_000);
    await exited;
    clearTimeout(t);
  };
  const proc = {
    child,
    output: () => out,
    exited,
    stop: () => stopWith('SIGTERM'),
    crash: () => stopWith('SIGKILL'),
  };
  if (opts.connected !== false) {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`runner did not connect in 30 s:\n${out}`)), 30_000);
      const check = () => {
        if (/connected as runner:/.test(out)) {
          clearTimeout(timer);
          resolve();
        }
      };
      child.stderr!.on('data', check);
      check();
      void exited.then((code) => {
        clearTimeout(timer);
        reject(new Error(`runner exited with ${code} before connecting:\n${out}`));
      });
    });
  }
  return proc;
}

/** What a test started: `cleanedUp` ends it all after the test. */
export interface Started {
  servers: ServerProcess[];
  runners: RunnerProcess[];
  dirs: string[];
  /** Agent process groups that must be gone once the runners are. */
  groups: number[];
}

/**
 * Lists to put what the test starts in; after it, failed or not, every runner and server is
 * ended (SIGCONT first: a test may have paused one), its dirs removed, and the test fails if an
 * agent group outlived them (killed all the same).
 */
export function cleanedUp(): Started {
  const s: Started = { servers: [], runners: [], dirs: [], groups: [] };
  after(async () => {
    for (const p of [...s.runners.map((r) => r.child), ...s.servers.map((x) => x.child)]) p.kill('SIGCONT');
    await Promise.all(s.runners.map((r) => r.crash()));
    await Promise.all(s.servers.map((x) => x.crash()));
    for (const d of s.dirs) rmSync(d, { recursive: true, force: true });
    for (const g of s.groups) {
      if (groupAlive(g)) {
        try {
          process.kill(-g, 'SIGKILL');
        } catch {}
        assert.fail(`agent process group ${g} outlived the test`);
      }
    }
  });
  return s;
}

/** Poll `fn` until it returns a value (not undefined) or `ms` pass. */
export async function until<T>(what: string, fn: () => Promise<T | undefined>, ms = 30_000): Promise<T> {
  const end = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const v = await fn();
      if (v !== undefined) return v;
    } catch (error) {
      last = error;
    }
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The process group of a live process (field 5 of /proc/<pid>/stat). */
export function pgidOf(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]);
}

/** Whether any process of group `pgid` is left (zombies waiting for a reaper count as gone). */
export function groupAlive(pgid: number): boolean {
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (Number(fields[2]) === pgid && fields[0] !== 'Z') return true;
    } catch {} // gone meanwhile
  }
  return false;
}

/** A session's output lines, oldest first. */
export async function outputs(server: ServerProcess, id: string): Promise<string[]> {
  const r = await server.api<{ events: Array<{ type: string; payload: { text?: string } }> }>(
    'GET',
    `/v1/sessions/${id}/events?limit=1000`,
  );
  return r.json.events.filter((e) => e.type === 'session.output').map((e) => e.payload.text ?? '');
}

export async function statusOf(server: ServerProcess, id: string): Promise<string> {
  const r = await server.api<{ status: string; session?: { status: string } }>('GET', `/v1/sessions/${id}`);
  return r.json.session?.status ?? r.json.status;
}

/** Read an operator fd until a message ending with `text` arrives; every text read on the way. */
export async function readUntil(
  server: ServerProcess,
  fd: number,
  text: string,
  ms = 30_000,
): Promise<string[]> {
  const seen: string[] = [];
  await until(
    `"${text}" on fd ${fd}`,
    async () => {
      const r = await server.api<{ messages: Array<{ text: string }> }>('POST', `/v1/fds/${fd}/read`, {
        wait: true,
        waitMs: 500,
      });
      for (const m of r.json.messages ?? []) seen.push(m.text);
      return seen.some((t) => t.endsWith(text)) ? true : undefined;
    },
    ms,
  );
  return seen;
}

export interface Spawned {
  session: { id: string; status: string };
  pipeFd: number;
}

/** Spawn on an environment; the HTTP status and the answer. */
export async function spawnOn(server: ServerProcess, environmentId: string, body: Record<string, unknown>) {
  return server.api<Spawned & { error?: { code: string; message: string } }>('POST', '/v1/sessions', {
    environmentId,
    ...body,
  });
}

export const echoCommand = () => ({ runtime: 'command', command: [process.execPath, ECHO_AGENT] });

/**
 * A `script` agent that says it is up, then answers two messages (`script got <text>`, after
 * the sender prefix), then waits: runs wherever the script runtime is (a server, a runner).
 */
export const echoScript = () => ({
  runtime: 'script',
  script: {
    steps: [
      { say: 'script up' },
      { wait: { as: 'm' } },
      { reply: 'script got ${m.text}' },
      { wait: { as: 'n' } },
      { reply: 'script got ${n.text}' },
      { wait: {} },
    ],
  },
});
