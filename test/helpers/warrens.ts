/**
 * Run a kernel suite against every backend: each `target.open()` is a real Warren (store,
 * kernel, syscall table) on a fresh SQLite file or PostgreSQL schema, closed after the test.
 */
import assert from 'node:assert/strict';
import { afterEach } from 'node:test';
import type { DialectKind, StoreLocation } from '../../src/store/dialect.ts';
import { allSyscalls } from '../../src/syscalls/table.ts';
import { Warren, type WarrenOptions } from '../../src/syscalls/warren.ts';
import { operator } from '../../src/vocab/principal.ts';
import { forEachStore } from './stores.ts';

export interface WarrenTarget {
  readonly kind: DialectKind;
  location(): StoreLocation;
  /** A fresh warren, or one reopened on `location`. Closed after the test. */
  open(opts?: Omit<WarrenOptions, 'db' | 'schema'> & { location?: StoreLocation }): Promise<Warren>;
}

export const op = operator();

/**
 * Fast timings for tests: short waits, short ticks. Agents run unconfined (`containment:
 * none`): the containment tests (test/runtimes/containment.test.ts) confine their own.
 */
export const testKernel = {
  containment: 'none' as const,
  maxWaitMs: 300,
  reconcileIntervalMs: 60_000,
  cursorFlushMs: 10,
  termGraceMs: 60_000,
};

export function forEachWarren(
  name: string,
  fn: (target: WarrenTarget) => void,
  backends?: DialectKind[],
): void {
  forEachStore(
    name,
    (stores) => {
      const open: Warren[] = [];
      afterEach(async () => {
        await Promise.allSettled(open.splice(0).map((w) => w.close()));
      });
      fn({
        kind: stores.kind,
        location: () => stores.location(),
        async open(opts = {}) {
          const { location = stores.location(), kernel, ...rest } = opts;
          await stores.prepare(location);
          const w = await Warren.open({
            db: location.url,
            ...(location.schema ? { schema: location.schema } : {}),
            kernel: { ...testKernel, ...kernel },
            ...rest,
          });
          const close = w.close.bind(w);
          let closing: Promise<void> | undefined;
          w.close = () => {
            closing ??= close();
            return closing;
          };
          open.push(w);
          return w;
        },
      });
    },
    backends ? { backends } : {},
  );
}

/**
 * How long a test waits for something that normally takes milliseconds. Generous on purpose:
 * a poll returns as soon as its condition holds, so the bound only matters on a loaded machine.
 */
export const WAIT_MS = 20_000;

/** Poll until `fn` returns something truthy, or fail after `ms`. */
export async function until<T>(
  fn: () => Promise<T> | T,
  ms = WAIT_MS,
  what = 'condition',
): Promise<NonNullable<T>> {
  const end = Date.now() + ms;
  let last: T | undefined;
  while (Date.now() < end) {
    last = await fn();
    if (last) return last as NonNullable<T>;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error(`timed out after ${ms} ms waiting for ${what} (last: ${JSON.stringify(last)})`);
}

// biome-ignore lint/suspicious/noExplicitAny: syscall outputs are checked by their own schemas
type Any = any;

/** Call a syscall as someone; outputs are loosely typed in tests. */
export const call = (w: Warren, name: string, input: Record<string, unknown> = {}, who = op): Promise<Any> =>
  w.call(who, name, input) as Promise<Any>;

/**
 * Every page of a paged syscall, `next` passed back as `after` until it is null (at most
 * `max` pages, so a cursor that never ends fails the test instead of hanging it). Each
 * page's `next` must be the id of its last item, as the syscalls promise.
 */
export async function pages(
  w: Warren,
  name: string,
  key: string,
  input: Record<string, unknown> = {},
  max = 20,
): Promise<Any[][]> {
  const out: Any[][] = [];
  let after: string | undefined;
  for (let i = 0; i < max; i++) {
    const page = await call(w, name, { ...input, ...(after ? { after } : {}) });
    out.push(page[key]);
    if (page.next === null) return out;
    assert.equal(page.next, page[key].at(-1).id, `${name}: next is the last item's id`);
    after = page.next;
  }
  throw new Error(`${name}: still a next page after ${max}`);
}

export const sessionOf = async (w: Warren, id: string) => (await call(w, 'session_show', { id })).session;

export const waitStatus = (w: Warren, id: string, status: string, ms = WAIT_MS) =>
  until(async () => (await sessionOf(w, id)).status === status, ms, `${id} to be ${status}`);

export const asSession = (id: string, depth = 1) => ({
  kind: 'session' as const,
  sessionId: id,
  zone: 'default',
  depth,
});

/** A log event as tests read it. */
export interface Ev {
  seq: number;
  type: string;
  actor: string;
  session_id: string | null;
  stream_id: string | null;
  payload: Record<string, unknown> & { text?: string };
}

/** A warren, or anything that carries one (an HTTP test harness). */
type HasWarren = Warren | { warren: Warren };
const warrenOf = (w: HasWarren): Warren => ('warren' in w ? w.warren : w);

/** A session's whole log, oldest first. */
export const eventsOf = async (w: HasWarren, id: string): Promise<Ev[]> =>
  (await call(warrenOf(w), 'session_events', { id, limit: 10_000 })).events;

/** The session's output lines, in order. */
export const outputs = async (w: HasWarren, id: string): Promise<string[]> =>
  (await eventsOf(w, id)).filter((e) => e.type === 'session.output').map((e) => e.payload.text ?? '');

/** Tier defaults opened up, for tests of deep trees (agents and workers spawning). */
const everySessionTool = allSyscalls.filter((s) => s.callers.includes('session')).map((s) => s.name);
export const deepTrees = { tiers: { agent: everySessionTool, worker: everySessionTool } };

/** Every session at every depth may call every session syscall: for tests of scopes, not of tool sets. */
export const everyTool = {
  tiers: { orchestrator: everySessionTool, agent: everySessionTool, worker: everySessionTool },
};

/**
 * A quiescent point for an in-process warren, instead of sleeping "until a duplicate would
 * show": no agent starting, every resume done, nothing waiting for delivery; then a whole
 * reconcile tick run after that (two calls: the first may join a tick already under way)
 * and the writer drained. What any handler or phase does about this state is committed now.
 */
export async function quiescent(w: Warren, ms = WAIT_MS): Promise<void> {
  await until(
    async () => {
      const h = await w.kernel.health();
      const { starting, resuming } = h.agents;
      return starting === 0 && resuming.done === resuming.total && h.delivery.backlog === 0;
    },
    ms,
    'nothing starting, resumed, nothing to deliver',
  );
  await w.kernel.reconcile();
  await w.kernel.reconcile();
  await w.store.writer.drained();
}

/** A script agent that idles until killed. */
export const idleScript = { steps: [{ listen: {} }] };

/** How many rows the tables that must not grow forever hold. */
export async function rowCounts(w: Warren): Promise<{ sessions: number; streams: number; fds: number }> {
  const n = async (table: 'sessions' | 'streams' | 'fds') =>
    Number(
      (
        await w.store.reader
          .selectFrom(table)
          .select((eb) => eb.fn.countAll<number>().as('n'))
          .executeTakeFirstOrThrow()
      ).n,
    );
  return { sessions: await n('sessions'), streams: await n('streams'), fds: await n('fds') };
}
