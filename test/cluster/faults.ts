/**
 * The fault rig of issue 26, shared by test/cluster/faults.test.ts (what must hold) and
 * `npm run bench -- faults` (how long recovery takes): a private PostgreSQL (own-postgres.ts),
 * three `warren serve` nodes (`--cluster on`, a short lease), node 0 reaching the database
 * through a TCP proxy (for partitions), two `warren runner`s of one name on node 1, an echo
 * `command` agent and a listening `script` agent on every node and on the runners, writers on
 * one room through every node, a sender to every agent, and a sampler that reads every agent
 * process from /proc and every session row each 250 ms. Triggers record which node wrote what
 * for which session and when (write-log.ts), and tag agent process records per node so no
 * node ends another's agents (as if each were on its own host).
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import pg from 'pg';
import { alive, type Server, sleep, within } from '../crash/harness.ts';
import type { OwnPostgres } from '../helpers/own-postgres.ts';
import { TcpProxy } from '../helpers/tcp-proxy.ts';
import { type RunnerProcess, startRunner } from '../runners/helpers.ts';
import { Cluster, echoProcesses, FAST, killEchoes, roomWriters, spawnEcho } from './harness.ts';
import { recordOwnership, recordWrites, separateHosts } from './write-log.ts';

/** The lease of the rig's nodes: short, so faults of a few leases keep the run short. */
export const FAULT_LEASE_MS = 2000;
const RUNNER_BEAT_MS = 250;
const LIVE = new Set(['idle', 'running']);
const SCHEMA = 'faults';

export type FaultName =
  | 'node SIGSTOP 3×lease'
  | 'pg_terminate_backend sweeps'
  | 'PostgreSQL fast restart'
  | 'PostgreSQL stopped 2×lease'
  | 'runner SIGSTOP 1.5×lease'
  | 'partition 2×lease'
  | 'partition 5×lease';

export const FAULTS: readonly FaultName[] = [
  'node SIGSTOP 3×lease',
  'pg_terminate_backend sweeps',
  'PostgreSQL fast restart',
  'PostgreSQL stopped 2×lease',
  'runner SIGSTOP 1.5×lease',
  'partition 2×lease',
  'partition 5×lease',
];

interface Agent {
  id: string;
  pipeFd: number;
  node: number;
  kind: 'command' | 'script';
  onRunner: boolean;
}

/** One 250 ms look: agent processes by session, and whether every session was live then. */
export interface Sample {
  at: number;
  procs: Map<string, number[]>;
  /** Undefined when the database did not answer. */
  allLive: boolean | undefined;
  /** Why not: the sessions not live, or without exactly one process. */
  why?: string;
}

/** What recovery from one fault took, from the moment it was injected. */
export interface Recovery {
  fault: string;
  /** Until a write through every node that is up was acknowledged again. */
  writesMs: number;
  /** Until every session was live with one process again (0: none ever stopped being). */
  liveMs: number;
}

/** A listener: says what it heard (a batch's texts, a line each) as its output, for good. */
const listenerScript = () => ({
  runtime: 'script',
  script: { steps: [{ say: 'listener up' }, { listen: { say: 'heard ${input.text}' } }] },
});

/**
 * Whether an answer (an echo's `echo:<send>`, a listener's `heard …` line) is to send `t`:
 * whole, not as the start of another (`to-x-4` is not answered by `echo:to-x-45`).
 */
const answers = (text: string, t: string): boolean =>
  text === `echo:${t}` || new RegExp(`(^|\\s)${t}($|\\s)`, 'm').test(text);

export class FaultRig {
  readonly samples: Sample[] = [];
  readonly sends: Array<{ agent: Agent; text: string; at: number }> = [];
  readonly runners: RunnerProcess[] = [];
  servers: Server[] = [];
  agents: Agent[] = [];
  private writers: ReturnType<typeof roomWriters> | undefined;
  private sampling = true;
  private sending = true;
  private background: Promise<void>[] = [];
  private roomFd = 0;
  private readonly probes: Array<{ text: string; seq: number }> = [];
  private readonly watch: pg.Pool;

  private constructor(
    readonly db: OwnPostgres,
    readonly cluster: Cluster,
    readonly proxy: TcpProxy,
    private readonly proxyUrl: string,
  ) {
    // The sampler's own way to the database: short timeouts, errors are a sample without rows.
    this.watch = new pg.Pool({
      connectionString: db.url,
      max: 1,
      connectionTimeoutMillis: 1000,
      query_timeout: 1000,
      application_name: 'fault sampler',
    });
    this.watch.on('error', () => {});
  }

  /** Everything started, agents live, traffic flowing. `cleanup()` even if this throws. */
  static async start(db: OwnPostgres, rigs: FaultRig[]): Promise<FaultRig> {
    const { proxy, url } = await TcpProxy.forUrl(db.url);
    const cluster = new Cluster({ url: db.url, schema: SCHEMA, durability: 'process' }, 3, {
      ...FAST,
      cluster: { ...FAST.cluster, leaseMs: FAULT_LEASE_MS, mode: 'on' },
      plugins: { config: { runners: { heartbeatMs: RUNNER_BEAT_MS } } },
    });
    const rig = new FaultRig(db, cluster, proxy, url);
    rigs.push(rig);
    await rig.boot();
    return rig;
  }

  private async boot(): Promise<void> {
    const c = this.cluster;
    const a = await c.start(0, this.proxyUrl);
    await c.withStore(async (store) => {
      await recordWrites(store, SCHEMA);
      await recordOwnership(store, SCHEMA);
      await separateHosts(store, SCHEMA);
    });
    this.servers = [a, await c.start(1), await c.start(2)];
    const b = this.servers[1]!;
    const { token } = await b.api<{ token: string }>('POST', '/v1/runners', { name: 'pool' });
    for (let i = 0; i < 2; i++) this.runners.push(await startRunner({ url: b.url, token, name: 'pool' }));

    await this.addAgents(0, false);
    await this.addAgents(1, false);
    await this.addAgents(2, false);
    await this.addAgents(1, true);

    const room = await a.api<{ fd: number }>('POST', '/v1/streams', { name: 'faults', selfEcho: true });
    this.roomFd = room.fd;
    this.writers = roomWriters(this.servers, room.fd, 6);
    this.background.push(this.sampler());
    this.sendersFor(this.agents);
    await within(30_000, 'traffic flowing', () => this.acked.length >= 30);
  }

  /**
   * An echo and a listener started through node `node` (on the runners when `onRunner`), live
   * with one process, each with a sender: a node that lost its sessions to an earlier fault
   * has some again for the next.
   */
  async addAgents(node: number, onRunner: boolean): Promise<void> {
    const s = this.servers[node]!;
    const env = onRunner ? { environmentId: 'runner:pool' } : {};
    const where = { node, onRunner };
    const cmd = await spawnEcho(s, `echo-${node}`, env);
    const scr = await spawnEcho(s, `listener-${node}`, { ...listenerScript(), ...env });
    const added: Agent[] = [
      { ...cmd, ...where, kind: 'command' },
      { ...scr, ...where, kind: 'script' },
    ];
    this.agents.push(...added);
    let last: Sample | undefined;
    await within(60_000, 'every agent live with one process', async () => {
      last = await this.sample();
      return last.allLive === true;
    }).catch((error) => {
      throw new Error(`${(error as Error).message} (${last?.why})`);
    });
    if (this.roomFd) this.sendersFor(added);
  }

  private sendersFor(agents: Agent[]): void {
    this.background.push(...agents.map((g) => this.sender(g)));
  }

  get ids(): string[] {
    return this.agents.map((g) => g.id);
  }

  /** Every room write acknowledged so far (writers and probes). */
  get acked(): Array<{ text: string; seq: number }> {
    return [...(this.writers?.acked ?? []), ...this.probes];
  }

  private async sample(): Promise<Sample> {
    const at = Date.now();
    const ids = this.ids;
    // /proc first, then the rows: a session's row read after its processes were.
    const procs = echoProcesses(ids);
    let allLive: boolean | undefined;
    let why = '';
    try {
      const r = await this.watch.query<{ id: string; status: string }>(
        `select id, status from "${SCHEMA}".sessions where id = any($1)`,
        [ids],
      );
      const off = [
        ...r.rows.filter((row) => !LIVE.has(row.status)).map((row) => `${row.id} ${row.status}`),
        ...this.agents
          .filter((g) => g.kind === 'command' && procs.get(g.id)?.length !== 1)
          .map((g) => `${g.id} ${procs.get(g.id)?.length ?? 0} processes`),
      ];
      allLive = r.rows.length === ids.length && off.length === 0;
      why = off.join(', ');
    } catch (error) {
      allLive = undefined;
      why = String(error);
    }
    const s = { at, procs, allLive, why };
    this.samples.push(s);
    return s;
  }

  private async sampler(): Promise<void> {
    while (this.sampling) {
      const t0 = Date.now();
      await this.sample();
      await sleep(Math.max(0, 250 - (Date.now() - t0)));
    }
  }

  /** A message to `g` about once a second, through the next node; acknowledged ones recorded. */
  private async sender(g: Agent): Promise<void> {
    for (let k = 0; this.sending; k++) {
      const text = `to-${g.id}-${k}`;
      const s = this.servers[(g.node + 1) % this.servers.length]!;
      try {
        await s.api('POST', `/v1/fds/${g.pipeFd}/write`, { message: text });
        this.sends.push({ agent: g, text, at: Date.now() });
      } catch {} // refused (503 during a fault): not acknowledged, nothing promised
      await sleep(1000);
    }
  }

  /**
   * One fault, then recovery waited for: how long each part took. Before a fault of node 0
   * (paused, cut off), node 0 is given agents of its own: an earlier fault took its sessions.
   */
  async inject(fault: FaultName): Promise<Recovery> {
    if (/^node |^partition /.test(fault)) await this.addAgents(0, false);
    return this.measure(fault, () => this.run(fault));
  }

  /** Runs `run` (it returns once the fault is healed), then waits for recovery. */
  private async measure(fault: string, run: () => Promise<void>, upNodes?: number[]): Promise<Recovery> {
    const t0 = Date.now();
    await run();
    const healedAt = Date.now();
    const nodes = upNodes ?? this.servers.map((_, i) => i);
    const writtenAt = new Map<number, number>();
    await within(120_000, `writes served again after ${fault}`, async () => {
      await Promise.all(
        nodes
          .filter((i) => !writtenAt.has(i))
          .map(async (i) => {
            const text = `probe-${i}-${Date.now()}`;
            try {
              const r = await this.servers[i]!.api<{ seq: number }>('POST', `/v1/fds/${this.roomFd}/write`, {
                message: text,
              });
              this.probes.push({ text, seq: r.seq });
              writtenAt.set(i, Date.now());
            } catch {}
          }),
      );
      return writtenAt.size === nodes.length;
    });
    await within(120_000, `every session live with one process after ${fault}`, async () => {
      // Samples from 500 ms after the heal on (what a SIGKILL ends takes that long to show),
      // the last second of them all live.
      const recent = this.samples.filter((s) => s.at > Math.max(healedAt + 500, Date.now() - 1000));
      return Date.now() - healedAt > 1500 && recent.length >= 3 && recent.every((s) => s.allLive === true);
    }).catch((error) => {
      throw new Error(`${(error as Error).message} (${this.samples.at(-1)?.why})`);
    });
    const after = this.samples.filter((s) => s.at >= t0);
    const lastDown = after.map((s) => s.allLive !== true).lastIndexOf(true);
    const liveMs = lastDown < 0 ? 0 : (after[lastDown + 1]?.at ?? Date.now()) - t0;
    return { fault, writesMs: Math.max(...writtenAt.values()) - t0, liveMs };
  }

  /** The fault itself, healed when it returns. */
  private run(fault: FaultName): Promise<void> {
    const L = FAULT_LEASE_MS;
    switch (fault) {
      case 'node SIGSTOP 3×lease':
        return this.pause(this.servers[0]!.child.pid!, 3 * L);
      case 'pg_terminate_backend sweeps':
        return this.sweeps(3);
      case 'PostgreSQL fast restart':
        return this.db.restart('fast');
      case 'PostgreSQL stopped 2×lease':
        return this.db.outage(2 * L);
      case 'runner SIGSTOP 1.5×lease':
        return this.pause(this.runnerOfAgent(), Math.floor(1.5 * L));
      case 'partition 2×lease':
        return this.partition(2 * L);
      case 'partition 5×lease':
        return this.partition(5 * L);
    }
  }

  private async pause(pid: number, ms: number): Promise<void> {
    process.kill(pid, 'SIGSTOP');
    try {
      await sleep(ms);
    } finally {
      process.kill(pid, 'SIGCONT');
    }
  }

  private async sweeps(n: number): Promise<void> {
    for (let i = 0; i < n; i++) {
      await this.db.terminateAll();
      await sleep(300);
    }
  }

  private async partition(ms: number): Promise<void> {
    this.proxy.blackhole();
    try {
      await sleep(ms);
    } finally {
      this.proxy.forward();
    }
  }

  /** The pid of the runner whose child is the runner's command agent now. */
  private runnerOfAgent(): number {
    const g = this.agents.find((x) => x.onRunner && x.kind === 'command')!;
    const [pid] = echoProcesses([g.id]).get(g.id) ?? [];
    if (!pid) throw new Error('the runner agent runs nowhere');
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    const runner = this.runners.find((r) => r.child.pid === ppid);
    if (!runner) throw new Error(`the runner agent ${pid} is a child of ${ppid}, no runner`);
    return ppid;
  }

  /** The SIGKILL baseline: node 0 killed, then (after recovery) started again. */
  async killNode(): Promise<Recovery> {
    await this.addAgents(0, false);
    const r = await this.measure('node SIGKILL (baseline)', () => this.servers[0]!.signal('SIGKILL'), [1, 2]);
    this.servers[0] = await this.cluster.start(0, this.proxyUrl);
    await within(60_000, 'node 0 back', async () => {
      const h = (await (await fetch(`${this.servers[0]!.url}/healthz`)).json()) as { ok: boolean };
      return h.ok;
    });
    return r;
  }

  /**
   * Traffic stopped; every acknowledged send's answer looked for (bounded): an echo's on its
   * pipe, a listener's in its output, on a node or on a runner alike (their input is
   * acknowledged when the turn that took it ends, so one cut off is handed again). Those never
   * answered, with where their agent was.
   */
  async drain(ms = 60_000): Promise<string[]> {
    this.sending = false;
    await this.writers?.stop();
    const t0 = Date.now();
    const missing = await Promise.all(
      this.agents.map(async (g) => {
        const want = new Set(this.sends.filter((x) => x.agent === g).map((x) => x.text));
        const s = this.servers[(g.node + 2) % this.servers.length]!;
        while (want.size > 0 && Date.now() - t0 < ms) {
          try {
            for (const text of await this.answers(s, g))
              for (const t of want) if (answers(text, t)) want.delete(t);
          } catch {
            await sleep(200);
          }
        }
        const where = `${g.kind} ${g.id} started on node ${g.node}${g.onRunner ? ' (runner)' : ''}`;
        if (want.size > 0 && process.env.ECHO_TRACE) await this.dumpLog(g, process.env.ECHO_TRACE);
        return [...want].map((t) => `${where}: ${t}`);
      }),
    );
    return missing.flat();
  }

  /** For a run traced with ECHO_TRACE: an agent's session and pipe as the log has them, to a file. */
  private async dumpLog(g: Agent, dir: string): Promise<void> {
    const q = async (text: string, args: unknown[]) =>
      (await this.watch.query({ text, values: args, query_timeout: 20_000 } as pg.QueryConfig)).rows;
    const fds = await q(
      `select * from "${SCHEMA}".fds where stream_id in (select stream_id from "${SCHEMA}".fds where holder = $1 and num = 1)`,
      [g.id],
    );
    const pipe = fds[0]?.stream_id;
    const events = await q(
      `select seq, ts, type, actor, left(payload, 300) as payload from "${SCHEMA}".events where session_id = $1 or stream_id = $2 order by seq`,
      [g.id, pipe],
    );
    const lines = [
      JSON.stringify(fds),
      ...events.map((e) => `${e.seq} ${e.ts} ${e.type} ${e.actor} ${e.payload}`),
      ...this.sends.filter((x) => x.agent === g).map((x) => `sent ${x.at} ${x.text}`),
    ];
    // Confined agents traced into their homes (on whichever node or runner ran them).
    const homes = execFileSync('find', ['/tmp', homedir(), '-name', `echo-${g.id}.log`], { encoding: 'utf8' })
      .split('\n')
      .filter((f) => f && !f.startsWith(dir));
    for (const f of homes) lines.push(`== ${f}`, readFileSync(f, 'utf8'));
    // What each node and runner logged of the session: which of them ran, fenced or stopped it.
    const mentions = (name: string, out: string) => {
      const hits = out.split('\n').filter((l) => l.includes(g.id));
      if (hits.length > 0) lines.push(`== ${name}`, ...hits);
    };
    for (const [i, s] of this.servers.entries()) mentions(`node ${i}`, s.output());
    for (const [i, r] of this.runners.entries()) mentions(`runner ${i}`, r.output());
    writeFileSync(`${dir}/log-${g.id}.txt`, `${lines.join('\n')}\n`);
  }

  /** What an agent answered since last asked (an echo: its pipe) or ever (a listener: its output). */
  private async answers(s: Server, g: Agent): Promise<string[]> {
    if (g.kind === 'command') {
      const r = await s.api<{ messages: Array<{ text: string }> }>('POST', `/v1/fds/${g.pipeFd}/read`, {
        wait: true,
        waitMs: 1000,
        limit: 1000,
      });
      return r.messages.map((m) => m.text);
    }
    const r = await s.api<{ events: Array<{ type: string; payload: { text?: string } }> }>(
      'GET',
      `/v1/sessions/${g.id}/events?limit=10000`,
    );
    await sleep(500);
    return r.events.filter((e) => e.type === 'session.output').map((e) => e.payload.text ?? '');
  }

  /** Samples in which some session had two agent processes. */
  doubled(): Array<{ at: number; session: string; pids: number[] }> {
    return this.samples.flatMap((s) =>
      [...s.procs]
        .filter(([, pids]) => pids.length > 1)
        .map(([session, pids]) => ({ at: s.at, session, pids })),
    );
  }

  /** Nodes or runners that exited, or logged an unhandled error. */
  casualties(): string[] {
    const out: string[] = [];
    const bad = /Unhandled 'error' event|unhandledRejection|Uncaught/;
    this.servers.forEach((s, i) => {
      if (!s.alive || bad.test(s.output())) out.push(`node ${i}:\n${s.output().slice(-3000)}`);
    });
    this.runners.forEach((r, i) => {
      if (r.child.exitCode !== null || r.child.signalCode !== null || bad.test(r.output()))
        out.push(`runner ${i}:\n${r.output().slice(-3000)}`);
    });
    return out;
  }

  /** Stop everything, failed or not: processes first (SIGCONT in case one was paused). */
  async cleanup(): Promise<void> {
    this.sampling = false;
    this.sending = false;
    for (const p of [...this.runners.map((r) => r.child), ...this.servers.map((s) => s.child)]) {
      try {
        p.kill('SIGCONT');
      } catch {}
    }
    this.proxy.forward();
    await this.writers?.stop().catch(() => {});
    await Promise.allSettled(this.runners.map((r) => r.crash()));
    await this.cluster.cleanup();
    killEchoes(this.ids);
    await Promise.allSettled(this.background);
    await this.proxy.close();
    await this.watch.end().catch(() => {});
  }

  /** Whether any agent process of the rig is left (after cleanup: none should be). */
  leftovers(): number[] {
    return [...echoProcesses(this.ids).values()].flat().filter(alive);
  }
}
