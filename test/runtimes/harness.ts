/**
 * A runtime started on its own, without a kernel: a context whose sink records every report in
 * order, so a test can assert what the runtime said (and when) and call handle methods the
 * kernel does not call yet (`finish`).
 */

import { sweepRunDir } from '../../src/runtimes/rundir.ts';
import type {
  AgentContext,
  AgentExit,
  AgentHandle,
  AgentProcess,
  AgentSink,
  Runtime,
} from '../../src/runtimes/types.ts';
import { systemClock } from '../../src/util/clock.ts';
import { gone } from '../helpers/processes.ts';
import { until } from '../helpers/warrens.ts';

export type Report =
  | { kind: 'output'; text: string }
  | { kind: 'event'; type: string; payload: Record<string, unknown> }
  | { kind: 'usage' | 'busy' | 'idle' | 'ready' | 'saveState' }
  | { kind: 'exit'; result: AgentExit }
  | { kind: 'activity'; text: string | null }
  | { kind: 'spawned'; proc: AgentProcess }
  | { kind: 'exited'; pid: number };

export interface Recorder {
  sink: AgentSink;
  reports: Report[];
  /** The first report matching `pred`, waiting up to `ms`. */
  waitFor<K extends Report['kind']>(
    kind: K,
    ms?: number,
    pred?: (r: Extract<Report, { kind: K }>) => boolean,
  ): Promise<Extract<Report, { kind: K }>>;
  of<K extends Report['kind']>(kind: K): Extract<Report, { kind: K }>[];
}

export function recorder(): Recorder {
  const reports: Report[] = [];
  const push = (r: Report) => {
    reports.push(r);
    return Promise.resolve();
  };
  const sink: AgentSink = {
    output: (text) => push({ kind: 'output', text }),
    event: (type, payload) => push({ kind: 'event', type, payload }),
    usage: () => push({ kind: 'usage' }),
    busy: () => push({ kind: 'busy' }),
    idle: () => push({ kind: 'idle' }),
    ready: () => void push({ kind: 'ready' }),
    saveState: () => push({ kind: 'saveState' }),
    exit: (result) => void push({ kind: 'exit', result }),
    activity: (text) => push({ kind: 'activity', text }),
    spawned: (proc) => void push({ kind: 'spawned', proc }),
    exited: (pid) => void push({ kind: 'exited', pid }),
  };
  const of = <K extends Report['kind']>(kind: K) =>
    reports.filter((r): r is Extract<Report, { kind: K }> => r.kind === kind);
  return {
    sink,
    reports,
    of,
    waitFor: (kind, ms = 20_000, pred = () => true) =>
      until(() => of(kind).find(pred), ms, `a ${kind} report`),
  };
}

export interface Started {
  handle: AgentHandle;
  rec: Recorder;
  /** Its context's run prefix. */
  run: string;
}

/** A fake session's context whose sink records; its `session_show` says stopped (so homes are cleaned). */
export function aloneContext(over: Partial<AgentContext> = {}): { ctx: AgentContext; rec: Recorder } {
  const rec = recorder();
  const ctx: AgentContext = {
    sessionId: `ses_test_${Math.random().toString(36).slice(2, 10)}`,
    zone: 'test',
    depth: 1,
    title: null,
    spec: { prompt: null, config: {}, cwd: null, model: null, env: {} },
    token: 'test-token',
    url: null,
    mcpUrl: null,
    tools: [],
    // A run of its own: cleanUp removes its private files' root (src/runtimes/rundir.ts).
    run: `wtest-${Math.random().toString(36).slice(2, 10)}`,
    resumeState: null,
    resuming: false,
    sink: rec.sink,
    call: async (name) => (name === 'session_show' ? { session: { status: 'stopped' } } : {}),
    clock: systemClock,
    ...over,
  };
  return { ctx, rec };
}

/** Start `runtime` with a fake session (see aloneContext). */
export async function startAlone(runtime: Runtime, over: Partial<AgentContext> = {}): Promise<Started> {
  const { ctx, rec } = aloneContext(over);
  return { handle: await runtime.start(ctx), rec, run: ctx.run };
}

/** Stop what a test started, and make sure every process group it reported is gone. */
export async function cleanUp(s: Started | undefined): Promise<void> {
  if (!s) return;
  await s.handle.stop().catch(() => {});
  for (const r of s.rec.of('spawned')) {
    try {
      process.kill(-r.proc.pgid, 'SIGKILL');
    } catch {}
    await until(() => gone(r.proc.pid), 20_000, `pid ${r.proc.pid} to be gone`);
  }
  // What a kernel's shutdown does for its node: no empty warren-run-* is left in the temp dir.
  sweepRunDir(s.run);
}
