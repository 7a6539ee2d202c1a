import { Worker } from 'node:worker_threads';
import { LOWER_OWN_PRIORITY } from '../../util/thread-priority.ts';
import { re2jsEntry } from './pattern.ts';

/**
 * The worker: re2js (pattern.ts), loaded from the path the server resolved, each pattern
 * compiled once (the last `COMPILED_KEPT` kept: an agent waits with one pattern on many inputs)
 * and tested in a vm context made once, under the vm's timeout. RE2 is linear in the input, so
 * no pattern backtracks; a large pattern on a long input still costs its size times the input
 * (`[ab]*a[ab]{1000}$` on 64 KiB: over a second), so the timeout stays and so does the worker.
 * A pattern cut off mid-match is compiled anew next time (re2js keeps state between matches).
 * Inline (an eval worker) so it runs the same from TypeScript sources and from the bundled
 * build. Its thread runs at a lower priority than the server's (thread-priority.ts).
 */
const COMPILED_KEPT = 64;
/**
 * A run starved of CPU is tried again while the match has taken less than twice its timeout plus
 * this: a trivial pattern gets through a loaded machine, a costly one is not run ten times over.
 */
const STARVED_GRACE_MS = 1000;
const WORKER_SOURCE = `${LOWER_OWN_PRIORITY}
const { parentPort, workerData } = require('node:worker_threads');
const vm = require('node:vm');
const { RE2JS } = require(workerData.re2js);
const compiled = new Map();
const compile = (pattern) => {
  let re = compiled.get(pattern);
  if (re) compiled.delete(pattern);
  else re = RE2JS.compile(pattern);
  compiled.set(pattern, re);
  if (compiled.size > ${COMPILED_KEPT}) compiled.delete(compiled.keys().next().value);
  return re;
};
const context = vm.createContext({ compile, pattern: '', input: '' });
// This thread's time on a CPU, in ms (Linux; NaN elsewhere): a run cut off by the timeout
// after little of it was spent computing was starved of a core, not costly.
const onCpuMs = () => {
  try {
    return Number(require('node:fs').readFileSync('/proc/thread-self/schedstat', 'utf8').split(' ')[0]) / 1e6;
  } catch {
    return NaN;
  }
};
const test = new vm.Script('compile(pattern).test(input)');
parentPort.on('message', ({ id, pattern, input, timeoutMs }) => {
  context.pattern = pattern;
  context.input = input;
  let result;
  // A run that times out is tried once more: the first may have paid for compiling the pattern
  // or waited for a core (this thread runs below the server's); one that really costs its time
  // runs out again. On a machine busy enough that this thread got under half its time on a
  // core, the run is tried again for a while: a trivial pattern must not read as no match.
  const began = Date.now();
  for (let attempt = 1; ; attempt++) {
    const cpuBefore = onCpuMs();
    try {
      result = test.runInContext(context, { timeout: timeoutMs }) === true;
      break;
    } catch (e) {
      // Cut off mid-match, the compiled pattern is not reused (re2js keeps state between matches).
      compiled.delete(pattern);
      const timedOut = e && e.code === 'ERR_SCRIPT_EXECUTION_TIMEOUT';
      const starved = onCpuMs() - cpuBefore < timeoutMs / 2;
      const inTime = Date.now() - began < 2 * timeoutMs + ${STARVED_GRACE_MS};
      if (timedOut && (attempt === 1 || (starved && inTime))) continue;
      result = timedOut ? 'timeout' : false;
      break;
    }
  }
  context.input = '';
  parentPort.postMessage({ id, result });
});
`;

/** Past its runs' timeouts (a starved match runs up to 3 timeouts + STARVED_GRACE_MS), how long the pool waits before it ends the worker. */
const HARD_GRACE_MS = 2000;

export type MatchResult = boolean | 'timeout';

interface Job {
  pattern: string;
  input: string;
  done: (r: MatchResult) => void;
}

/**
 * Runs `wait.match` patterns, which come from the request, off the event loop: in one worker
 * thread, a pattern at a time, each under `timeoutMs` (a pattern that runs out of time, such
 * as `[ab]*a[ab]{1000}$` on 64 KiB of `ab…`, counts as no match). The server's thread only waits for the answer,
 * so 50 agents backtracking at once delay each other, never the server. A worker that does
 * not answer within the timeout plus a grace is ended and a new one started for the next
 * pattern. Each agent waits for its match before it asks for another, so the queue holds at
 * most one pattern per agent, first come first served: every agent's turn comes within one
 * round of the others' (the per-caller budget is one pattern and `timeoutMs` a turn).
 * Inputs are matched on their first `maxInput` characters. The worker starts when a script that
 * waits on a pattern starts (`warm`), or at the first match; a server whose scripts wait on no
 * pattern never starts it. It keeps no process alive while idle; `close` ends it.
 */
export class MatchPool {
  private worker: Worker | undefined;
  private readonly queue: Job[] = [];
  private running: { id: number; job: Job; hard: NodeJS.Timeout } | undefined;
  private nextId = 0;

  constructor(
    private readonly timeoutMs: number,
    private readonly maxInput: number,
  ) {}

  /**
   * Whether `input` matches `pattern`; 'timeout' when the pattern ran out of time (no match).
   * `signal`: the agent is gone; a pattern still waiting its turn is dropped (counts as no match).
   */
  test(pattern: string, input: string, signal?: AbortSignal): Promise<MatchResult> {
    const text = input.length > this.maxInput ? input.slice(0, this.maxInput) : input;
    if (signal?.aborted) return Promise.resolve(false);
    return new Promise((done) => {
      const job: Job = { pattern, input: text, done };
      this.queue.push(job);
      signal?.addEventListener(
        'abort',
        () => {
          const at = this.queue.indexOf(job);
          if (at < 0) return;
          this.queue.splice(at, 1);
          done(false);
        },
        { once: true },
      );
      this.pump();
    });
  }

  /** Start the worker ahead of its first pattern (it holds the process open only while it works). */
  warm(): void {
    if (!this.running) this.started().unref();
  }

  /** End the worker; patterns waiting count as timed out. A later `test` starts a new one. */
  async close(): Promise<void> {
    const worker = this.worker;
    this.worker = undefined;
    const waiting = [...(this.running ? [this.running.job] : []), ...this.queue.splice(0)];
    if (this.running) clearTimeout(this.running.hard);
    this.running = undefined;
    for (const job of waiting) job.done('timeout');
    await worker?.terminate();
  }

  private pump(): void {
    if (this.running) return;
    const job = this.queue.shift();
    if (!job) {
      this.worker?.unref();
      return;
    }
    const worker = this.started();
    // Awaited by an agent: keeps the process alive until it answers.
    worker.ref();
    const id = this.nextId++;
    const hard = setTimeout(() => this.restart(id), this.timeoutMs * 3 + STARVED_GRACE_MS + HARD_GRACE_MS);
    this.running = { id, job, hard };
    worker.postMessage({ id, pattern: job.pattern, input: job.input, timeoutMs: this.timeoutMs });
  }

  private started(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      execArgv: [],
      workerData: { re2js: re2jsEntry() },
    });
    worker.on('message', (m: { id: number; result: MatchResult }) => this.answered(m.id, m.result));
    // A worker that failed or exited answers nobody: the pattern in hand counts as timed out.
    worker.on('error', () => this.lost(worker));
    worker.on('exit', () => this.lost(worker));
    this.worker = worker;
    return worker;
  }

  private answered(id: number, result: MatchResult): void {
    if (this.running?.id !== id) return;
    clearTimeout(this.running.hard);
    const { job } = this.running;
    this.running = undefined;
    job.done(result);
    this.pump();
  }

  /** The worker did not answer in time: end it, count the pattern as timed out, go on with a new one. */
  private restart(id: number): void {
    if (this.running?.id !== id || !this.worker) return;
    const worker = this.worker;
    this.worker = undefined;
    void worker.terminate();
    this.answered(id, 'timeout');
  }

  private lost(worker: Worker): void {
    if (this.worker !== worker) return;
    this.worker = undefined;
    if (this.running) this.answered(this.running.id, 'timeout');
  }
}
