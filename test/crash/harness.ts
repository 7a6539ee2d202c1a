/**
 * Real server processes for the crash tests, with the Warren options a test needs (a node id
 * of its own, a short SIGTERM grace, opened tiers) and /proc views of the agents they run.
 * Every server and agent a test starts is ended by `Nodes.cleanup()`, failed test or not.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import type { KernelConfig } from '../../src/kernel/config.ts';
import { markPrefix } from '../../src/kernel/supervisor.ts';
import { markedPids } from '../../src/runtimes/process/marks.ts';
import { Store } from '../../src/store/store.ts';
import type { GatingPolicy } from '../../src/syscalls/gate.ts';
import { systemClock } from '../../src/util/clock.ts';
import { createIds } from '../../src/util/ids.ts';
import { binEnv } from '../helpers/server.ts';
import type { StoreTarget } from '../helpers/stores.ts';

/** The crash tests' reconcile interval: two ticks make a quiescent point (`Server.quiescent`). */
export const QUIESCENT_TICK_MS = 250;

const ENTRY = fileURLToPath(new URL('./serve-with.js', import.meta.url));

export interface NodeOptions {
  kernel?: Partial<KernelConfig>;
  gating?: GatingPolicy;
}

export interface Session {
  id: string;
  status: string;
  endReason: string | null;
  endDetail: string | null;
  suspendReason: string | null;
  parentId: string | null;
  depth: number;
  lastMessage: string | null;
}

export interface Ev {
  seq: number;
  /** Commit time (ms, the server's clock). */
  ts?: number;
  type: string;
  session_id?: string | null;
  sessionId?: string | null;
  payload: Record<string, unknown>;
}

/** The part of `GET /v1/status` the crash tests read. */
export interface Status {
  reconcile: { intervalMs: number; lastTick: { n: number; at: number } | null };
  agents: { alive: number; starting: number; resuming: { done: number; total: number } };
  delivery: { backlog: number };
}

export class Server {
  private out = '';
  readonly exited: Promise<void>;
  url = '';
  key = '';

  constructor(
    readonly child: ChildProcess,
    private readonly dataDir: string,
  ) {
    child.stdout!.setEncoding('utf8').on('data', (c: string) => {
      this.out += c;
    });
    child.stderr!.setEncoding('utf8').on('data', (c: string) => {
      this.out += c;
    });
    this.exited = new Promise((r) => child.once('exit', () => r()));
  }

  get pid(): number {
    return this.child.pid!;
  }

  output(): string {
    return this.out;
  }

  get alive(): boolean {
    return this.child.exitCode === null && this.child.signalCode === null;
  }

  async listening(): Promise<void> {
    this.url = await new Promise<string>((resolve, reject) => {
      const timer = setTimeout(() => reject(new Error(`server did not start in 60 s:\n${this.out}`)), 60_000);
      const check = () => {
        const m = /warren listening on (http:\/\/\S+)/.exec(this.out);
        if (m) {
          clearTimeout(timer);
          resolve(m[1]!);
        }
      };
      this.child.stdout!.on('data', check);
      this.child.once('exit', (code) => {
        clearTimeout(timer);
        reject(new Error(`server exited with ${code} before listening:\n${this.out}`));
      });
    });
    this.key = readFileSync(join(this.dataDir, 'operator.key'), 'utf8').trim();
  }

  /** Send a signal; resolve when the server has exited (SIGKILL after `ms`). */
  async signal(sig: NodeJS.Signals, ms = 15_000): Promise<void> {
    if (!this.alive) return;
    this.child.kill(sig);
    const t = setTimeout(() => this.child.kill('SIGKILL'), ms);
    await this.exited;
    clearTimeout(t);
  }

  async api<T = unknown>(method: string, path: string, body?: unknown): Promise<T> {
    const res = await fetch(this.url + path, {
      method,
      headers: {
        authorization: `Bearer ${this.key}`,
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
      },
      ...(body !== undefined ? { body: JSON.stringify(body) } : {}),
    });
    const json = (await res.json()) as T;
    if (res.status >= 400) throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(json)}`);
    return json;
  }

  async session(id: string): Promise<Session> {
    return (await this.api<{ session: Session }>('GET', `/v1/sessions/${id}`)).session;
  }

  async events(id: string): Promise<Ev[]> {
    return (await this.api<{ events: Ev[] }>('GET', `/v1/sessions/${id}/events?limit=10000`)).events;
  }

  /**
   * A quiescent point, instead of sleeping "until a duplicate would show": the server has no
   * agent starting, has resumed all it had to, and has nothing waiting for delivery; then a
   * whole reconcile tick that started after that has finished (the last finished tick's
   * number + 2: the tick after it may have been under way already). Every phase, the
   * plugins' dispatchers and the lost-agent sweep included, has then looked at this state
   * once more; a duplicate it makes is in the log and the process table by now.
   */
  async quiescent(ms = 60_000): Promise<void> {
    let seen = 0;
    await within(ms, 'nothing starting, resumed, nothing to deliver', async () => {
      const st = await this.status();
      seen = st.reconcile.lastTick?.n ?? 0;
      const { starting, resuming } = st.agents;
      return starting === 0 && resuming.done === resuming.total && st.delivery.backlog === 0;
    });
    await within(ms, `reconcile tick ${seen + 2} finished`, async () => {
      return ((await this.status()).reconcile.lastTick?.n ?? 0) >= seen + 2;
    });
  }

  status(): Promise<Status> {
    return this.api<Status>('GET', '/v1/status');
  }

  /** Poll until `pred` holds for the session (or throw with what it was). */
  async until(id: string, pred: (s: Session) => boolean, ms = 30_000): Promise<Session> {
    const deadline = Date.now() + ms;
    let s = await this.session(id);
    while (!pred(s)) {
      if (Date.now() > deadline) throw new Error(`session ${id} never got there: ${JSON.stringify(s)}`);
      await sleep(50);
      s = await this.session(id);
    }
    return s;
  }
}

/** One data dir (SQLite file or PostgreSQL schema) with its node id, and the servers started on it. */
export class Node {
  readonly nodeId = `t${Math.random().toString(36).slice(2, 10)}`;
  readonly run = markPrefix(this.nodeId);
  readonly dataDir = mkdtempSync(join(tmpdir(), 'warren-orphans-'));
  readonly db: string;
  readonly servers: Server[] = [];
  private readonly loc;

  constructor(
    private readonly target: StoreTarget,
    private readonly options: NodeOptions = {},
  ) {
    this.loc = target.location();
    this.db =
      target.kind === 'sqlite'
        ? join(this.dataDir, 'warren.db')
        : `${this.loc.url}?schema=${this.loc.schema}`;
  }

  async start(): Promise<Server> {
    // Reconcile ticks a few times a second (unless a test says otherwise), so that waiting for
    // a quiescent point (`Server.quiescent`) costs well under a second.
    const opts = {
      ...this.options,
      kernel: { reconcileIntervalMs: QUIESCENT_TICK_MS, ...this.options.kernel, nodeId: this.nodeId },
    };
    const child = spawn(
      process.execPath,
      [ENTRY, 'serve', '--port', '0', '--data-dir', this.dataDir, '--db', this.db],
      {
        stdio: ['ignore', 'pipe', 'pipe'],
        // Unconfined: these count process groups per session, which a sandbox's own session changes
        // (the confined kill is test/containment's); a test may still pass WARREN_CONTAINMENT.
        env: {
          ...process.env,
          ...binEnv(),
          WARREN_CONTAINMENT: 'none',
          WARREN_TEST_OPTIONS: JSON.stringify(opts),
        },
      },
    );
    const s = new Server(child, this.dataDir);
    this.servers.push(s);
    await s.listening();
    return s;
  }

  /** Live processes carrying this node's mark. */
  marked(): Promise<number[]> {
    return markedPids({ run: this.run });
  }

  /** The store, opened directly (the server may be dead), closed after `fn`. */
  async withStore<T>(fn: (store: Store) => Promise<T>): Promise<T> {
    const store = await Store.open(
      this.target.kind === 'sqlite' ? { url: this.db, durability: 'process' } : { ...this.loc },
      systemClock,
      createIds(systemClock),
    );
    try {
      return await fn(store);
    } finally {
      await store.close();
    }
  }

  /** The agent process records in the store. */
  records(): Promise<Array<{ session_id: string; pid: number; pgid: number; run_id: string }>> {
    return this.withStore((store) =>
      store.reader.selectFrom('agent_procs').select(['session_id', 'pid', 'pgid', 'run_id']).execute(),
    );
  }

  /** Processes a test started outside warren (planted survivors): ended by cleanup. */
  readonly planted: number[] = [];

  /** A `sleep` in a session and group of its own, as a crashed run's survivor would be. */
  plant(env: NodeJS.ProcessEnv = {}): number {
    const child = spawn('sleep', ['1000'], {
      detached: true,
      stdio: 'ignore',
      env: { ...process.env, ...env },
    });
    child.unref();
    this.planted.push(child.pid!);
    return child.pid!;
  }

  /** Kill every server and every marked process left, remove the data dir. */
  async cleanup(): Promise<void> {
    await Promise.allSettled(this.servers.map((s) => s.signal('SIGKILL', 1000)));
    for (const pid of this.planted) {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {}
    }
    for (let i = 0; i < 3; i++) {
      for (const pid of await this.marked()) {
        try {
          process.kill(pid, 'SIGKILL');
        } catch {}
      }
    }
    rmSync(this.dataDir, { recursive: true, force: true });
  }
}

/** The process group and a few fields of a live process, from /proc. */
export function procInfo(
  pid: number,
): { pgid: number; sid: number; state: string; mark: string | null } | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const f = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const env = readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0');
    const mark = env.find((e) => e.startsWith('WARREN_AGENT_MARK='))?.slice('WARREN_AGENT_MARK='.length);
    return { state: f[0]!, pgid: Number(f[2]), sid: Number(f[3]), mark: mark ?? null };
  } catch {
    return null;
  }
}

export function alive(pid: number): boolean {
  const info = procInfo(pid);
  return info !== null && info.state !== 'Z';
}

/** Wait until `pred()` holds; returns how long it took (throws past `ms`). */
export async function within(
  ms: number,
  what: string,
  pred: () => Promise<boolean> | boolean,
): Promise<number> {
  const t0 = Date.now();
  for (;;) {
    if (await pred()) return Date.now() - t0;
    if (Date.now() - t0 > ms) throw new Error(`not within ${ms} ms: ${what}`);
    await sleep(50);
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

export const FORKER = ['sh', '-c', 'sleep 1000 & sleep 1000'];
/** One child leaves the agent's session and group (and holds its stdout). */
export const SETSID = ['sh', '-c', 'setsid sleep 1000 & sleep 1000'];

/** Spawn forking command agents (default FORKER each); wait until each runs its two children. */
export async function spawnForkers(
  s: Server,
  node: Node,
  n: number,
  commands: string[][] = [],
): Promise<string[]> {
  const ids: string[] = [];
  for (let i = 0; i < n; i++) {
    const r = await s.api<{ session: { id: string } }>('POST', '/v1/sessions', {
      runtime: 'command',
      command: commands[i] ?? FORKER,
      title: `forker-${i}`,
    });
    ids.push(r.session.id);
  }
  await within(30_000, `${n} agents with their children`, async () => (await sleepers(node)) >= n * 2);
  return ids;
}

/** How many of the node's live processes are the agents' `sleep` children. */
export async function sleepers(node: Node): Promise<number> {
  let n = 0;
  for (const pid of await node.marked()) {
    try {
      if (readFileSync(`/proc/${pid}/comm`, 'utf8').trim() === 'sleep') n++;
    } catch {}
  }
  return n;
}

/** Process groups (by pgid) and marks of a node's live processes. */
export async function groups(node: Node): Promise<{
  pids: number[];
  pgids: Set<number>;
  marks: Set<string>;
  /** pid → its mark */
  markOf: Map<number, string>;
  /** process group → the mark of its members */
  byPgid: Map<number, string>;
}> {
  const pids = await node.marked();
  const markOf = new Map<number, string>();
  const byPgid = new Map<number, string>();
  for (const pid of pids) {
    const info = procInfo(pid);
    if (!info?.mark) continue;
    markOf.set(pid, info.mark);
    byPgid.set(info.pgid, info.mark);
  }
  return { pids, pgids: new Set(byPgid.keys()), marks: new Set(markOf.values()), markOf, byPgid };
}

/**
 * After a restart: each session resumed exactly once, one recorded group each, nothing of
 * before. `escaped`: descendants that left their group on purpose (setsid), each a group of its own.
 */
export async function checkRestart(
  s: Server,
  node: Node,
  ids: string[],
  before: number[],
  escaped = 0,
): Promise<void> {
  for (const id of ids) await s.until(id, (x) => x.status === 'running');
  await within(
    30_000,
    'resumed agents with their children',
    async () => (await sleepers(node)) >= ids.length * 2,
  );
  await s.quiescent();
  const g = await groups(node);
  assert.equal(g.pgids.size, ids.length + escaped, `one process group per live session:\n${psOf(g.pids)}`);
  assert.equal(g.marks.size, ids.length, 'one mark per live session');
  for (const pid of before) assert.ok(!g.pids.includes(pid), `pid ${pid} of the previous run is gone`);
  const recs = await node.records();
  assert.equal(recs.length, ids.length, 'one process record per live session');
  assert.deepEqual(new Set(recs.map((r) => r.session_id)), new Set(ids));
  assert.equal(new Set(recs.map((r) => r.pgid)).size, ids.length, 'one recorded group per session');
  for (const r of recs)
    assert.ok(g.pgids.has(r.pgid), `recorded group ${r.pgid} is a live group of this run`);
  for (const id of ids) {
    const resumed = (await s.events(id)).filter(
      (e) => e.type === 'session.status' && e.payload.reason === 'resumed',
    );
    assert.equal(resumed.length, 1, `${id} resumed exactly once`);
  }
}

/** pid, pgid, sid and command line of some processes, for failure messages. */
export function psOf(pids: number[]): string {
  return pids
    .map((p) => {
      const i = procInfo(p);
      let cmd = '';
      try {
        cmd = readFileSync(`/proc/${p}/cmdline`, 'utf8')
          .replaceAll('\0', ' ')
          .replaceAll('\n', ' ')
          .slice(0, 60);
      } catch {}
      return `${p} pgid=${i?.pgid} sid=${i?.sid} ${i?.mark} ${cmd}`;
    })
    .join('\n');
}
