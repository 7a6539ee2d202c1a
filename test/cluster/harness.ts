/**
 * Several real `warren serve` processes on one PostgreSQL schema (docs/scaling.md), each with
 * its own data dir and node id, short leases so a lost node is noticed in about a second.
 * Every server and agent process a test starts is killed by `cleanup()`, failed test or not.
 */
import { spawn } from 'node:child_process';
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { markPrefix } from '../../src/kernel/supervisor.ts';
import { markedPids } from '../../src/runtimes/process/marks.ts';
import type { StoreLocation } from '../../src/store/dialect.ts';
import { Store } from '../../src/store/store.ts';
import { systemClock } from '../../src/util/clock.ts';
import { createIds } from '../../src/util/ids.ts';
import { Server } from '../crash/harness.ts';
import { binEnv } from '../helpers/server.ts';

const ENTRY = fileURLToPath(new URL('../crash/serve-with.js', import.meta.url));
export const ECHO_AGENT = fileURLToPath(new URL('./echo-agent.mjs', import.meta.url));

export const FAST = {
  // Short, yet long enough that a node stalled by a loaded machine is not declared lost.
  cluster: { leaseMs: 3000, heartbeatMs: 250, pollMs: 200 },
  kernel: { reconcileIntervalMs: 500 },
};

export class ClusterNode {
  readonly dataDir = mkdtempSync(join(tmpdir(), 'warren-cluster-'));
  server: Server | undefined;
  constructor(readonly nodeId: string) {}

  get s(): Server {
    if (!this.server) throw new Error(`node ${this.nodeId} is not running`);
    return this.server;
  }

  marked(): Promise<number[]> {
    return markedPids({ run: markPrefix(this.nodeId) });
  }
}

/** N nodes on one schema; start them with `start(i)`. */
export class Cluster {
  readonly nodes: ClusterNode[];
  readonly db: string;

  constructor(
    private readonly loc: StoreLocation,
    n: number,
    private readonly options: Record<string, unknown> = FAST,
  ) {
    const tag = Math.random().toString(36).slice(2, 8);
    this.nodes = Array.from({ length: n }, (_, i) => new ClusterNode(`n${i}-${tag}`));
    this.db = `${loc.url}?schema=${loc.schema}`;
  }

  /**
   * Start node i (the first one started makes the operator key; the others get a copy).
   * `url`: its own way to the database (a proxy the test controls) instead of the shared one.
   */
  async start(i: number, url?: string): Promise<Server> {
    const node = this.nodes[i]!;
    const first = this.nodes.find((n) => n !== node && n.server);
    if (first) copyFileSync(join(first.dataDir, 'operator.key'), join(node.dataDir, 'operator.key'));
    const opts = {
      ...this.options,
      kernel: { ...(this.options.kernel as object), nodeId: node.nodeId },
    };
    const child = spawn(
      process.execPath,
      [
        ENTRY,
        'serve',
        '--port',
        '0',
        '--data-dir',
        node.dataDir,
        '--db',
        url ? `${url}?schema=${this.loc.schema}` : this.db,
      ],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
        env: { ...process.env, ...binEnv(), WARREN_TEST_OPTIONS: JSON.stringify(opts) },
      },
    );
    const s = new Server(child, node.dataDir);
    node.server = s;
    await s.listening();
    return s;
  }

  /** One after the other (the first makes the operator key): on a loaded machine, each start keeps its own bound. */
  async startAll(): Promise<Server[]> {
    const out: Server[] = [];
    for (let i = 0; i < this.nodes.length; i++) out.push(await this.start(i));
    return out;
  }

  /** The store, opened directly, closed after `fn`. */
  async withStore<T>(fn: (store: Store) => Promise<T>): Promise<T> {
    const store = await Store.open({ ...this.loc }, systemClock, createIds(systemClock));
    try {
      return await fn(store);
    } finally {
      await store.close();
    }
  }

  async cleanup(): Promise<void> {
    await Promise.allSettled(this.nodes.map((n) => n.server?.signal('SIGKILL', 1000)));
    for (let i = 0; i < 3; i++) {
      for (const n of this.nodes) {
        for (const pid of await n.marked()) {
          try {
            process.kill(pid, 'SIGKILL');
          } catch {}
        }
      }
    }
    for (const n of this.nodes) rmSync(n.dataDir, { recursive: true, force: true });
  }
}

/**
 * Spawn an echo agent through `s` with a sync pipe: its id and the operator's pipe fd. `extra`
 * goes into the spawn (an `environmentId`, or another runtime and spec, as `echoScript()`).
 */
export async function spawnEcho(
  s: Server,
  title: string,
  extra: Record<string, unknown> = {},
): Promise<{ id: string; pipeFd: number }> {
  // It says it reports turns, so a slow start on a loaded machine is waited out, not guessed at.
  const agent = extra.runtime
    ? {}
    : { runtime: 'command', command: `${process.execPath} ${ECHO_AGENT}`, config: { turns: true } };
  const trace = process.env.ECHO_TRACE ? { env: { ECHO_TRACE: process.env.ECHO_TRACE } } : {};
  const body = { ...agent, title, pipe: 'sync', ...trace, ...extra };
  // A node briefly fenced (its renewal late on a loaded machine) answers 503 having done
  // nothing: retried, as its Retry-After says a client should, for a bounded while.
  const deadline = Date.now() + 20_000;
  for (;;) {
    try {
      const r = await s.api<{ session: { id: string }; pipeFd: number }>('POST', '/v1/sessions', body);
      return { id: r.session.id, pipeFd: r.pipeFd };
    } catch (error) {
      if (!/: 503 /.test((error as Error).message) || Date.now() > deadline) throw error;
      await sleep(500);
    }
  }
}

/** Read the operator's fd through `s` until a message that is (or ends with) `text` arrives (bounded). */
export async function readUntil(s: Server, fd: number, text: string, ms = 10_000): Promise<number> {
  const t0 = Date.now();
  while (Date.now() - t0 < ms) {
    const r = await s.api<{ messages: Array<{ text: string; seq: number }> }>('POST', `/v1/fds/${fd}/read`, {
      wait: true,
      waitMs: 1000,
    });
    const hit = r.messages.find((m) => m.text === text || m.text.endsWith(text));
    if (hit) return Date.now() - t0;
  }
  throw new Error(`fd ${fd} never got ${JSON.stringify(text)} within ${ms} ms`);
}

/** Whether `pid` is an echo agent (node running the script), not the lifeline watcher beside it. */
function isEcho(pid: number): boolean {
  try {
    const argv = readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    return argv[0] === process.execPath && argv[1]?.endsWith('echo-agent.mjs') === true;
  } catch {
    return false; // gone meanwhile
  }
}

/** How many of these processes are echo agents (not the lifeline watchers beside them). */
export function echoes(pids: number[]): number {
  return pids.filter(isEcho).length;
}

/**
 * Every live echo agent process on this host of one of `sessions`, by session (its
 * WARREN_SESSION_ID): whoever started it, a node or a runner. Zombies count as gone.
 */
export function echoProcesses(sessions: readonly string[]): Map<string, number[]> {
  const wanted = new Set(sessions);
  const out = new Map<string, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const pid = Number(entry);
    if (!isEcho(pid)) continue;
    try {
      const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
      if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) continue;
      const env = readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0');
      const id = env.find((e) => e.startsWith('WARREN_SESSION_ID='))?.slice('WARREN_SESSION_ID='.length);
      if (id && wanted.has(id)) out.set(id, [...(out.get(id) ?? []), pid]);
    } catch {} // gone meanwhile
  }
  return out;
}

/** SIGKILL every echo agent process of `sessions` left on this host (a test's cleanup). */
export function killEchoes(sessions: readonly string[]): void {
  for (const pids of echoProcesses(sessions).values()) {
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {} // gone meanwhile
    }
  }
}

/** A test's cleanup, even after a failure: runners, servers, then any agent process of ours left over. */
export async function tearDown(
  clusters: readonly Cluster[],
  runners: readonly { crash(): Promise<void> }[],
  sessions: readonly string[],
): Promise<void> {
  await Promise.allSettled(runners.map((r) => r.crash()));
  for (const c of clusters) await c.cleanup();
  killEchoes(sessions);
}

/**
 * Writers on one room through every node (writer w starts on node w % 3), each recording the
 * messages the server acknowledged with their seqs. A writer whose node is gone (node 0, the
 * one the tests kill) moves to B or C. `stop()` ends them and returns what was acknowledged.
 */
export function roomWriters(
  servers: readonly Server[],
  fd: number,
  count: number,
): { acked: Array<{ text: string; seq: number }>; stop(): Promise<Array<{ text: string; seq: number }>> } {
  const acked: Array<{ text: string; seq: number }> = [];
  let writing = true;
  const writer = async (w: number) => {
    let n = w % servers.length;
    for (let k = 0; writing; k++) {
      const text = `w${w}-${k}`;
      try {
        const r = await servers[n]!.api<{ seq: number }>('POST', `/v1/fds/${fd}/write`, { message: text });
        acked.push({ text, seq: r.seq });
      } catch {
        if (n === 0) n = 1 + (w % 2); // A is gone: B or C
        await new Promise((r) => setTimeout(r, 20));
      }
    }
  };
  const running = Array.from({ length: count }, (_, w) => writer(w));
  return {
    acked,
    async stop() {
      writing = false;
      await Promise.all(running);
      return acked;
    },
  };
}
