/**
 * stall: untrusted work must never hold the event loop (issue 25). One real `warren serve`
 * (the build, a child process). A prober process of its own (lib/prober.mjs), warmed up before
 * each window and run ahead of the others for the CPU (nice -10 where allowed, as a health
 * checker elsewhere would not queue behind the attacker), asks `/healthz` 100 times a second,
 * open loop (a stall shows as every request it held, not as one slow sample): with the server
 * idle after the attack's setup, then while the attack runs. Row: the p99 during the attack,
 * its idle p99 beside it (same run, same server), the ratio; goal: ≤ 50 ms during.
 * Table: attack (row name) | during p99 (value) | idle p99 (baseline) | ratio | goal.
 *
 * The note splits the figure (lib/loop-watch.mjs, preloaded into the server): the server
 * loop's longest gap, how much of a gap at most was the main thread's own work (CPU) and how
 * much waiting for a core, and how long the prober's own loop was held. On a machine loaded
 * by other work the gaps are mostly waiting; the CPU part is what the server does to itself.
 *
 * - stallWaitMatch: 50 script agents wait on `wait.match: (a+)+$`; each is sent 10 inputs on
 *   which a backtracking engine backtracks (`aaa…a!`, 100 ms each before it was cut off: 50 s
 *   of matching, the window its first 15 s), then one that matches. Under RE2 none
 *   backtracks: the window ends when all 50 agents have said they matched.
 * - stallWaitMatchPlain: the same 550 sends to 50 agents waiting on `go`, which costs nothing to
 *   match: the sends' own load (ten clients each keeping a send in flight), measured in the same
 *   run, so the two attack rows show what their patterns add to it.
 * - stallWaitMatchCostly: the same with what RE2 still pays for, a pattern's size per input
 *   character: `[ab]*a[ab]{1000}[ab]{1000}$` on 16 KiB of pseudo-random a/b (1–3 s a match,
 *   each cut off at 100 ms): the worker busy for 50 s again, at its lower priority.
 * - stallScriptSteps: ten agents that waited for a word run 999 steps each (`say`, `usage`, a
 *   `call` of `ipc_list_fds`), until all ten have ended. Their spawn, ten 40 KB requests at once, is
 *   measured apart (in the note).
 * - stallKnowledgeSearch: 3,000 findings of ~12 KiB, every one holding every query word; two
 *   callers loop `knowledge_search` with a 25-word query (any word) for 8 s.
 * - stallRouteGlobs: 3,000 routes (30 groups × the 100-route cap) of worst-case globs
 *   (`*a…ab` on every key); two callers loop `groups_inbound` with 300-character fields that
 *   make every glob work (four keys match, the fifth fails) for 8 s. Rows `routeMatchAtCap`
 *   and `routeMatch3000`: the matching itself per message, in this process, over 100 such
 *   routes (one group at its cap) and over 3,000.
 * - stallSocketLines: 100 connections to the zone's MCP unix socket at once, each writing
 *   10 MiB with no newline, until written or closed by the server; how much of it the server
 *   read (/proc/<pid>/io), and its peak RSS after.
 *
 * `npx tsx bench/stall.ts` runs it alone; STALL_ATTACKS=stallScriptSteps,… runs some;
 * STALL_PROFILE=<dir> keeps, per window, the server main thread's CPU profile, its loop's gaps
 * and every probe's send time and latency there (one monotonic clock: slow probes line up with
 * the gaps and the profile's samples).
 */
import { spawn as spawnChild } from 'node:child_process';
import { mkdirSync, readFileSync } from 'node:fs';
import { connect, type Socket } from 'node:net';
import { getPriority, setPriority } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { byOrder, parseMatch } from '../src/plugins/groups/match.ts';
import { RouteIndex } from '../src/plugins/groups/route-index.ts';
import { type ServerProcess, startServer } from '../test/helpers/server.ts';
import { costlyMatch } from '../test/runtimes/script-helpers.ts';
import { type CpuMark, type CpuShare, cpuMark, cpuShare } from './lib/cpu-share.ts';
import { LoopWatch, type LoopWindow, watchEnv } from './lib/loop-watch.ts';
import { round, type Summary, summary } from './lib/stats.ts';
import { tempDir } from './lib/tempdir.ts';
import type { BenchRow } from './store.ts';

const GOAL_MS = 50;
const PROBE_EVERY_MS = 10;
const IDLE_MS = 2_000;

const PROBER = fileURLToPath(new URL('./lib/prober.mjs', import.meta.url));
const PROBER_NICE = -10;

interface Probed {
  /** `/healthz` latencies as the prober saw them. */
  probes: Summary;
  /** The longest the prober's own loop was held (the machine's share of the figure). */
  proberLagMs: number;
  /** The prober's nice value (PROBER_NICE where the bench may raise it, else the bench's own). */
  proberNice: number;
}

/**
 * `/healthz` latencies from the prober (lib/prober.mjs), asked every 10 ms from when it is warm
 * until `start()`'s work settles or `maxMs` passes; `start` is called once the prober is ready,
 * so the window holds the work and nothing of the prober's own start.
 */
async function probe<T>(
  url: string,
  start: () => Promise<T>,
  maxMs: number,
): Promise<Probed & { work: Promise<T> }> {
  // With STALL_PROFILE, every probe's send time and latency is kept beside the profiles.
  const dump = process.env.STALL_PROFILE
    ? { PROBER_DUMP: join(process.env.STALL_PROFILE, `probes-${Math.round(performance.now())}.json`) }
    : {};
  const child = spawnChild(process.execPath, [PROBER, url, String(PROBE_EVERY_MS), String(maxMs)], {
    stdio: ['pipe', 'pipe', 'inherit'],
    env: { ...process.env, ...dump },
  });
  // A health checker does not wait behind the attacker for a core: the prober runs ahead of the
  // bench and the server where it may (root), so its figure is the server's, not its own turn.
  try {
    setPriority(child.pid!, PROBER_NICE);
  } catch {}
  const proberNice = getPriority(child.pid!);
  let out = '';
  const exited = new Promise<void>((r) => child.once('exit', () => r()));
  const ready = new Promise<void>((resolve) => {
    child.stdout!.setEncoding('utf8').on('data', (d: string) => {
      out += d;
      if (out.startsWith('ready\n')) resolve();
    });
  });
  try {
    await Promise.race([ready, exited]);
    if (!out.startsWith('ready\n')) throw new Error(`the prober ended before it was ready: ${out}`);
    const work = start();
    await Promise.race([work.catch(() => {}), exited]);
    // It may have ended on its own (maxMs): then there is no one to tell.
    child.stdin!.on('error', () => {});
    if (child.exitCode === null) child.stdin!.end('stop\n');
    await exited;
    const { latencies, lagMs } = JSON.parse(out.slice('ready\n'.length)) as {
      latencies: number[];
      lagMs: number;
    };
    return { probes: summary(latencies), proberLagMs: lagMs, proberNice, work };
  } finally {
    if (child.exitCode === null) child.kill('SIGKILL');
  }
}

const idle = (url: string) => probe(url, () => sleep(IDLE_MS), IDLE_MS);

// biome-ignore lint/suspicious/noExplicitAny: REST answers are checked by the server's own schemas
type Any = any;

async function ok(server: ServerProcess, method: string, path: string, body?: unknown): Promise<Any> {
  const res = await server.api<Any>(method, path, body);
  if (res.status >= 300)
    throw new Error(`${method} ${path}: ${res.status} ${JSON.stringify(res.json).slice(0, 300)}`);
  return res.json;
}

/** Run `fn` over `items`, `width` at a time. */
async function pool<T>(items: readonly T[], width: number, fn: (x: T) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: width }, async () => {
      while (next < items.length) await fn(items[next++]!);
    }),
  );
}

async function ended(server: ServerProcess, ids: readonly string[], maxMs: number): Promise<void> {
  const until = performance.now() + maxMs;
  const want = new Set(ids);
  const live = async () =>
    ((await ok(server, 'GET', '/v1/sessions?limit=200')).sessions as Array<{ id: string }>).some((s) =>
      want.has(s.id),
    );
  while (await live()) {
    if (performance.now() > until) throw new Error(`not every session ended within ${maxMs} ms`);
    await sleep(250);
  }
  // A script that failed early would measure nothing: every one must have run to its end.
  for (const id of ids) {
    const { session } = await ok(server, 'GET', `/v1/sessions/${id}`);
    if (session.endReason !== 'completed')
      throw new Error(`${id} ended ${session.endReason}: ${String(session.endDetail).slice(0, 200)}`);
  }
}

const spawn = async (server: ServerProcess, script: unknown): Promise<string> =>
  (await ok(server, 'POST', '/v1/sessions', { runtime: 'script', script, pipe: 'detach' })).session.id;

interface Attack {
  name: string;
  what: string;
  /** Before the idle measurement. */
  setup(server: ServerProcess): Promise<void>;
  /** The attack; the during-figure covers it until it settles (or maxMs). */
  run(server: ServerProcess): Promise<string | undefined>;
  /** After the figures: what must not weigh on the next attack. */
  teardown?(server: ServerProcess): Promise<void>;
  maxMs: number;
}

/** What one kind of `wait.match` attack sends: the pattern, the ten inputs, one that matches. */
interface MatchAttack {
  name: string;
  what: string;
  pattern: string;
  evil: string;
  fits: string;
}

/** `(a+)+$`: exponential for a backtracking engine, linear for RE2. */
const backtracking = (): MatchAttack => ({
  name: 'stallWaitMatch',
  what: '50 agents × 10 backtracking wait.match inputs',
  pattern: '(a+)+$',
  evil: `${'a'.repeat(40)}!`,
  fits: 'aaaa',
});

/**
 * What still costs RE2: a thousand-position window over 16 KiB of pseudo-random a/b, on which
 * the DFA's cache thrashes and every character costs the pattern's size (1–3 s a match
 * here, so each runs its full `matchTimeoutMs`). The test suite's costly pattern.
 */
const linearCostly = (): MatchAttack => {
  const { pattern, input } = costlyMatch(16 * 1024);
  return {
    name: 'stallWaitMatchCostly',
    what: `50 agents × 10 wait.match inputs costly under RE2 (16 KiB, ${pattern})`,
    pattern,
    evil: input,
    fits: `a${'b'.repeat(2000)}`,
  };
};

/** The same 550 sends to agents on a pattern that costs nothing: the sends' own load, to set beside the attacks. */
const plain = (): MatchAttack => ({
  name: 'stallWaitMatchPlain',
  what: '50 agents × 10 wait.match inputs on a plain pattern (the sends alone)',
  pattern: 'go',
  evil: 'no',
  fits: 'go',
});

const waitMatch = (kind: MatchAttack): Attack => {
  const agents: string[] = [];
  return {
    name: kind.name,
    what: kind.what,
    maxMs: 15_000,
    async setup(server) {
      const script = { steps: [{ wait: { match: kind.pattern } }, { say: 'matched' }] };
      for (let i = 0; i < 50; i++) agents.push(await spawn(server, script));
    },
    async run(server) {
      const until = performance.now() + 15_000;
      // Only this attack's events count: an earlier attack's agents said `matched` too.
      const from = (await ok(server, 'GET', '/v1/events?limit=1')).events[0]?.seq ?? 0;
      await pool(agents, 10, async (id) => {
        for (let m = 0; m < 10; m++) await ok(server, 'POST', `/v1/sessions/${id}/send`, { text: kind.evil });
        // Last, an input that matches: the agent says so once it has been through the ten.
        await ok(server, 'POST', `/v1/sessions/${id}/send`, { text: kind.fits });
      });
      // A pattern that runs its 100 ms on each input: 500 of them are ~50 s of matching, one at
      // a time, and the window is the first 15 s of it. One answered at once (RE2 on `(a+)+$`)
      // ends the window when every agent has matched its last input.
      const count = async (type: string) =>
        (await ok(server, 'GET', `/v1/events?type=${type}&after=${from}&limit=1000`)).events.length as number;
      while (performance.now() < until && (await count('session.output')) < agents.length) await sleep(100);
      return `${await count('session.match_timeout')} of 500 patterns timed out (no match), ${await count('session.output')} of ${agents.length} agents through all ten in the window`;
    },
    async teardown(server) {
      // An agent that matched its last input has ended on its own (409 session_stopped).
      await pool(agents, 10, (id) =>
        ok(server, 'POST', `/v1/sessions/${id}/kill`, {}).catch((e: Error) => {
          if (!e.message.includes('session_stopped')) throw e;
        }),
      );
    },
  };
};

const longScript = {
  steps: Array.from({ length: 1000 }, (_, i) =>
    i % 3 === 0
      ? { say: `step ${i}` }
      : i % 3 === 1
        ? { usage: { inputTokens: 1 } }
        : { call: { syscall: 'ipc_list_fds' } },
  ),
};

/**
 * The steps, not the spawn: ten agents wait for a word, then run 999 more steps each. Spawning
 * ten 40 KB scripts at once costs the loop what any ten 40 KB requests do (noted apart).
 */
const scriptSteps = (): Attack => {
  const ids: string[] = [];
  let spawnGap = '';
  return {
    name: 'stallScriptSteps',
    what: 'ten 1,000-step scripts at once',
    maxMs: 60_000,
    async setup(server) {
      // A run first: the server's code is warm, as it is for an attacker of a running server.
      await ended(server, [await spawn(server, longScript)], 60_000);
      const script = { steps: [{ wait: {} }, ...longScript.steps.slice(1)] };
      const spawning = await probe(
        server.url,
        () => Promise.all(Array.from({ length: 10 }, () => spawn(server, script))),
        60_000,
      );
      ids.push(...(await spawning.work));
      spawnGap = `spawning the ten at once: /healthz p99 ${round(spawning.probes.p99, 0)} ms`;
    },
    async run(server) {
      await Promise.all(ids.map((id) => ok(server, 'POST', `/v1/sessions/${id}/send`, { text: 'go' })));
      await ended(server, ids, 60_000);
      return spawnGap;
    },
  };
};

/** 200 made-up words; every finding holds nearly all of them, so each query word is in every finding. */
const WORDS = Array.from({ length: 200 }, (_, i) => `w${(i * 7919).toString(36)}x`);

const knowledgeSearch = (): Attack => ({
  name: 'stallKnowledgeSearch',
  what: '25-word search over 3,000 findings, 2 callers',
  maxMs: 8_000,
  async setup(server) {
    const body = (n: number) =>
      Array.from({ length: 1500 }, (_, i) => WORDS[(n * 31 + i * 17) % WORDS.length]).join(' ');
    await pool(
      Array.from({ length: 3000 }, (_, n) => n),
      8,
      (n) => ok(server, 'POST', '/v1/knowledge', { title: `finding ${n} ${WORDS[n % 200]}`, body: body(n) }),
    );
  },
  async run(server) {
    const query = encodeURIComponent(WORDS.slice(0, 25).join(' '));
    const until = performance.now() + 8_000;
    let n = 0;
    const ms: number[] = [];
    await Promise.all(
      [0, 1].map(async () => {
        while (performance.now() < until) {
          const t = performance.now();
          await ok(server, 'GET', `/v1/knowledge?query=${query}&match=any`);
          ms.push(performance.now() - t);
          n++;
        }
      }),
    );
    const s = summary(ms);
    return `${n} searches, each p50 ${round(s.p50, 0)} ms`;
  },
});

/**
 * Globs that make a backtracking matcher work hardest on 300-character fields (the most
 * inbound allows): `*a…ab` retried from each of ~150 starts, ~150 characters each. The
 * first four keys match after that work, the fifth fails after it: every key is paid for.
 */
const HARD = `*${'a'.repeat(150)}b`;
const FIELD = `${'a'.repeat(299)}b`;
const MATCH_KEYS = ['platform', 'room', 'chat_jid', 'sender', 'verb'];
const worstMatch = MATCH_KEYS.map((k, i) => `${k}=${i < 4 ? HARD : HARD.replace(/b$/, 'c')}`).join(' ');
const nearMiss = Object.fromEntries(MATCH_KEYS.map((k) => [k, FIELD]));

const routeGlobs = (): Attack => ({
  name: 'stallRouteGlobs',
  what: '3,000 worst-case route globs, inbound from 2 callers',
  maxMs: 8_000,
  async setup(server) {
    for (let g = 0; g < 30; g++) {
      await ok(server, 'POST', '/v1/groups', { folder: `g${g}` });
      const routes = Array.from({ length: 100 }, (_, r) => ({
        seq: g * 100 + r,
        match: worstMatch,
        target: `g${g}`,
      }));
      await ok(server, 'POST', '/v1/routes/set', { routes, group: `g${g}` });
    }
  },
  async run(server) {
    const until = performance.now() + 8_000;
    const ms: number[] = [];
    const msg = nearMiss;
    await Promise.all(
      [0, 1].map(async () => {
        while (performance.now() < until) {
          const t = performance.now();
          await ok(server, 'POST', '/v1/inbound', { ...msg, text: 'hi' });
          ms.push(performance.now() - t);
        }
      }),
    );
    const s = summary(ms);
    return `${ms.length} messages, each p50 ${round(s.p50, 0)} ms`;
  },
});

/** Matching alone, in this process: per message over 100 worst-case routes (a group at its cap) and over 3,000. */
function routeMatchAtCap(): BenchRow[] {
  const rows: BenchRow[] = [];
  const msg = nearMiss;
  const literal = { platform: 'telegram', room: '-100', chat_jid: '', sender: 'alice', verb: 'message' };
  for (const n of [100, 3000]) {
    const routes = Array.from({ length: n }, (_, i) => ({
      id: `r${i}`,
      seq: i,
      target: 'g',
      match: parseMatch(worstMatch),
    })).sort(byOrder);
    const plain = Array.from({ length: n }, (_, i) => ({
      id: `r${i}`,
      seq: i,
      target: 'g',
      match: parseMatch(`platform=telegram room=-${i}`),
    })).sort(byOrder);
    const time = (index: RouteIndex<(typeof routes)[number]>, m: typeof msg) => {
      const ms: number[] = [];
      for (let i = 0; i < 20; i++) {
        const t = performance.now();
        index.first(m);
        ms.push(performance.now() - t);
      }
      return summary(ms).p50;
    };
    const worst = time(new RouteIndex(routes), msg);
    const base = time(new RouteIndex(plain), literal);
    rows.push({
      name: `routeMatch${n === 100 ? 'AtCap' : '3000'}`,
      value: round(worst, 3),
      unit: 'ms/msg',
      baseline: round(base, 3),
      ratio: round(worst / base, 1),
      ...(n === 100 ? { max: 1 } : {}),
      note: `${n} routes of ${HARD.length}-char globs on every key, 300-char near-miss fields; baseline: ${n} literal routes, no match`,
    });
  }
  return rows;
}

const socketLines = (): Attack => ({
  name: 'stallSocketLines',
  what: '100 connections × 10 MiB unterminated line on the MCP socket',
  maxMs: 60_000,
  async setup() {},
  async run(server) {
    const path = join(dataDirOf(server), 'mcp', 'default.sock');
    const readBefore = bytesReadBy(server.child.pid!);
    const chunk = Buffer.alloc(64 * 1024, 'x');
    let refused = 0;
    let closed = 0;
    const one = () =>
      new Promise<void>((resolve) => {
        const s: Socket = connect(path);
        let written = 0;
        let answer = '';
        const finish = () => {
          s.destroy();
          resolve();
        };
        s.setEncoding('utf8');
        s.on('data', (d: string) => {
          answer += d;
        });
        s.on('error', finish);
        s.on('close', () => {
          if (written < 10 * 1024 * 1024) answer.includes('connections') ? refused++ : closed++;
          resolve();
        });
        const pump = () => {
          while (written < 10 * 1024 * 1024 && !s.destroyed) {
            written += chunk.length;
            if (!s.write(chunk)) return void s.once('drain', pump);
          }
          if (written >= 10 * 1024 * 1024) setTimeout(finish, 500);
        };
        s.on('connect', pump);
      });
    await Promise.all(Array.from({ length: 100 }, one));
    const rss = rssMib(server.child.pid!);
    const read = Math.round((bytesReadBy(server.child.pid!) - readBefore) / 1024 / 1024);
    return `${refused} refused at connect, ${closed} closed mid-line; the server read ${read} MiB of the 1,000 written; server RSS after: ${rss} MiB`;
  },
});

const dataDirOf = (server: ServerProcess): string => {
  const args = server.child.spawnargs;
  return args[args.indexOf('--data-dir') + 1]!;
};

/** What a process has read through read(2) and its kind so far (sockets included): /proc/<pid>/io's rchar. */
function bytesReadBy(pid: number): number {
  return Number(/rchar:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/io`, 'utf8'))?.[1] ?? Number.NaN);
}

function rssMib(pid: number): number {
  const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  return m ? Math.round(Number(m[1]) / 1024) : Number.NaN;
}

interface Window<T> extends Probed {
  /** The server's own loop over the same window. */
  loop: LoopWindow;
  /** Who used the CPUs in the window. */
  cpu: CpuShare;
  work: Promise<T>;
  seconds: number;
}

/**
 * One measured window: the prober's figures and the server's loop over the same stretch. The
 * previous window is closed first (the server answers a mark on its loop, and with profiling
 * writes a profile there), so no probe of this window waits behind it.
 */
async function measure<T>(
  server: ServerProcess,
  watch: LoopWatch,
  start: () => Promise<T>,
  maxMs: number,
): Promise<Window<T>> {
  await watch.mark();
  let from: CpuMark | undefined;
  const probed = await probe(
    server.url,
    () => {
      from = cpuMark(server.child.pid!);
      return start();
    },
    maxMs,
  );
  const cpu = cpuShare(from!, cpuMark(server.child.pid!));
  const seconds = (performance.now() - from!.at) / 1000;
  return { ...probed, loop: await watch.mark(), cpu, seconds };
}

/**
 * Where the figures come from (idle / during): the CPUs in use (cores: the server, this bench,
 * and other work on the machine); the server's loop (ms), its longest gap and the most of one
 * it spent on its own work (CPU) rather than waiting for a core; the prober's own loop.
 */
const held = (idle: Window<unknown>, during: Window<unknown>): string => {
  const [i, d] = [idle.loop, during.loop];
  const used = (c: CpuShare) => `${c.machine} (server ${c.server}, bench ${c.bench}, other ${c.other})`;
  return `CPUs busy of ${during.cpu.cores}, idle / during: ${used(idle.cpu)} / ${used(during.cpu)}; server loop: longest gap ${i.gap.max} / ${d.gap.max} (p99 ${i.gap.p99} / ${d.gap.p99}), its own CPU in one gap at most ${i.cpu.max} / ${d.cpu.max} (p99 ${i.cpu.p99} / ${d.cpu.p99}), waiting for a core at most ${i.wait.max} / ${d.wait.max}; the prober's own loop (nice ${during.proberNice}) ${idle.proberLagMs} / ${during.proberLagMs}`;
};

async function stall(): Promise<BenchRow[]> {
  using tmp = tempDir('warren-bench-stall-');
  // STALL_PROFILE=<dir> keeps each window's CPU profile of the server's main thread there.
  const profiles = process.env.STALL_PROFILE;
  const watchDir = profiles ?? join(tmp.dir, 'watch');
  mkdirSync(watchDir, { recursive: true });
  const server = await startServer({
    dataDir: join(tmp.dir, 'data'),
    env: { WARREN_MAX_SESSIONS_PER_ZONE: '200', LOG_LEVEL: 'warn', ...watchEnv(watchDir, !!profiles) },
  });
  const watch = new LoopWatch(server.child.pid!, watchDir);
  const rows: BenchRow[] = [];
  try {
    await idle(server.url); // warm-up: connections, JIT
    // And one unmeasured round of the plain sends: the first window then meets a running
    // server's warm code, as scriptSteps' first run does for its steps, not its first JIT (the
    // first window moved 26–226 ms p99 from run to run while the server's own work in a gap stayed ≤ 33 ms).
    const warm = waitMatch(plain());
    await warm.setup(server);
    await warm.run(server);
    await warm.teardown?.(server);
    // STALL_ATTACKS=stallScriptSteps,stallSocketLines runs only those.
    const only = process.env.STALL_ATTACKS?.split(',');
    const attacks = [
      waitMatch(plain()),
      waitMatch(backtracking()),
      waitMatch(linearCostly()),
      scriptSteps(),
      knowledgeSearch(),
      routeGlobs(),
      socketLines(),
    ];
    for (const attack of attacks.filter((a) => !only || only.includes(a.name))) {
      process.stderr.write(`stall: ${attack.name} …\n`);
      await attack.setup(server);
      const before = await measure(server, watch, () => sleep(IDLE_MS), IDLE_MS);
      const during = await measure(server, watch, () => attack.run(server), attack.maxMs);
      const note = await during.work;
      if (profiles)
        process.stderr.write(`  profiles: idle ${before.loop.profile}, during ${during.loop.profile}\n`);
      await attack.teardown?.(server);
      const [i, d] = [before.probes, during.probes];
      rows.push({
        name: attack.name,
        value: round(d.p99, 1),
        unit: 'ms p99',
        baseline: round(i.p99, 1),
        ratio: round(d.p99 / i.p99, 1),
        max: GOAL_MS,
        note: `${attack.what}; ${during.seconds.toFixed(1)} s; idle p50 ${round(i.p50, 1)} ms, during p50 ${round(d.p50, 1)} max ${round(d.max, 0)} ms; ${held(before, during)}${note ? `; ${note}` : ''}`,
      });
    }
  } finally {
    await server.stop();
  }
  return [...rows, ...routeMatchAtCap()];
}

export const stallBenches = { stall };

if (import.meta.url === `file://${process.argv[1]}`) {
  const { formatRows } = await import('./store.ts');
  console.log(formatRows(await stall()));
}
