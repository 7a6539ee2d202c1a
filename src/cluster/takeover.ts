import { setTimeout as delay } from 'node:timers/promises';
import { sql } from 'kysely';
import { LOCAL_ENVIRONMENT } from '../kernel/environments.ts';
import { bootId, killRecordedGroup } from '../runtimes/process/identity.ts';
import type { Store } from '../store/store.ts';
import { type LiveNode, liveNodes, type NodeEntry } from './registry.ts';

/** Why a taken-over session is suspended (and what the adopt phase looks for, as a prefix). */
export const NODE_LOST = 'node lost';

/** A lost node's runner session no live node can run yet: what it waits for, said in its reason. */
export function waitingForRunner(runner: string): string {
  return `${NODE_LOST}: waiting for ${runner} to connect to a live node`;
}

const LIVE = ['pending', 'running', 'idle'] as const;

/** How long, at most, the takeover waits for a lost node's ended connections to be gone. */
const END_WAIT_MS = 2000;
const END_POLL_MS = 20;

export interface TakeoverResult {
  node: string;
  /** Session id → the node it was handed to (null: no live node can run its runtime). */
  moved: Record<string, string | null>;
}

/**
 * Nodes whose lease ran out: each is declared lost and its live sessions are handed on, in
 * one transaction per node, exactly once — the update that declares it lost is conditional on
 * its epoch and expired lease, so of several nodes trying, one wins; the others change nothing.
 * Sessions are suspended (seed 001: a drop suspends) and given to a live node that can run
 * their runtime, round robin; that node resumes them (a `node.lost` event names it; its adopt
 * phase is the backstop). The lost node, if it comes back, finds its lease gone and its
 * sessions owned elsewhere: it is fenced, and ends its processes.
 *
 * A node counts as lost only `graceMs` after its lease ran out (lease-timing.ts: the margin):
 * it fenced itself, on its own clock, that margin *before* its lease ran out, so its agents
 * are ended before anyone takes their sessions, even with the nodes' clocks a little apart.
 *
 * Only a node that holds its own lease takes over: each transaction first locks this node's
 * row and checks its epoch is current, live and unexpired at `now`, so a node back from an
 * outage (when every lease looks expired) or declared lost itself meanwhile claims nothing.
 */
export async function takeOverLost(
  store: Store,
  now: number,
  me: NodeEntry,
  graceMs: number,
  /** As `lostNodes` found them (default: found now). */
  lost?: readonly LostNode[],
): Promise<TakeoverResult[]> {
  const expiredBefore = now - graceMs;
  const out: TakeoverResult[] = [];
  for (const dead of lost ?? (await lostNodes(store, now, me.id, graceMs))) {
    const live = (await liveNodes(store, now)).filter((n) => n.id !== dead.id);
    const r = await store.writer.write(async (tx) => {
      const mine = await tx.db
        .updateTable('nodes')
        .set((eb) => ({ heartbeat_at: eb.ref('heartbeat_at') }))
        .where('id', '=', me.id)
        .where('epoch', '=', me.epoch)
        .where('state', '=', 'live')
        .where('lease_until', '>=', now)
        .executeTakeFirst();
      if (Number(mine.numUpdatedRows) !== 1) return null;
      const declared = await tx.db
        .updateTable('nodes')
        .set({ state: 'lost' })
        .where('id', '=', dead.id)
        .where('epoch', '=', dead.epoch)
        .where('state', '=', 'live')
        .where('lease_until', '<', expiredBefore)
        .executeTakeFirst();
      if (Number(declared.numUpdatedRows) !== 1) return null;
      const sessions = await tx.db
        .selectFrom('sessions')
        .select(['id', 'zone', 'status', 'runtime', 'runner'])
        .where('owner_node', '=', dead.id)
        .where('status', 'in', LIVE)
        .orderBy('id')
        .execute();
      const pick = picker(live);
      const moved: Record<string, string | null> = {};
      for (const s of sessions) {
        const to = pick(s.runtime, s.runner);
        moved[s.id] = to?.id ?? null;
        // Visible: a runner session nobody can run says which runner it waits for.
        const reason = to || s.runner === LOCAL_ENVIRONMENT ? NODE_LOST : waitingForRunner(s.runner);
        await tx.db
          .updateTable('sessions')
          .set({
            status: 'suspended',
            suspend_reason: reason,
            owner_node: to?.id ?? null,
            owner_epoch: to?.epoch ?? null,
            updated_at: tx.now,
          })
          .where('id', '=', s.id)
          .execute();
        // What setStatus writes for a move to suspended (which notifies nobody).
        tx.append({
          zone: s.zone,
          type: 'session.status',
          actor: 'kernel',
          session_id: s.id,
          payload: { from: s.status, to: 'suspended', reason },
        });
      }
      // Its process records: ended here if they are on this machine (its agents would end by
      // their lifeline anyway), so nothing of the lost node keeps running beside the new ones.
      const procs = await tx.db
        .selectFrom('agent_procs')
        .selectAll()
        .where('run_id', 'like', `${dead.id}.%`)
        .execute();
      const boot = bootId();
      tx.afterCommit(() => {
        for (const p of procs) {
          if (p.start_time && p.boot_id === boot)
            killRecordedGroup({ pid: p.pid, pgid: p.pgid, startTime: p.start_time, bootId: p.boot_id });
        }
      });
      tx.append({
        zone: 'default',
        type: 'node.lost',
        actor: 'kernel',
        payload: { node: dead.id, epoch: Number(dead.epoch), moved },
      });
      return { node: dead.id, moved };
    });
    if (r) out.push(r);
  }
  return out;
}

/** A node whose lease ran out `graceMs` ago or more, as `lostNodes` found it. */
export interface LostNode {
  id: string;
  epoch: number;
}

/**
 * The other nodes whose lease ran out `graceMs` ago or more, still recorded live, with their
 * database connections ended (below). Found and ended before the takeover's lock is asked
 * for (cluster.ts): a node takes that lock at every heartbeat, so one cut off while it held it
 * would hold it, on a connection nothing closes, until its connections end.
 */
export async function lostNodes(
  store: Store,
  now: number,
  self: string,
  graceMs: number,
): Promise<LostNode[]> {
  const lost = await store.reader
    .selectFrom('nodes')
    .select(['id', 'epoch'])
    .where('state', '=', 'live')
    .where('lease_until', '<', now - graceMs)
    .where('id', '!=', self)
    .execute();
  for (const dead of lost) await endConnections(store, dead.id);
  return lost;
}

/**
 * End the database connections of a node whose lease ran out past the margin (it fenced
 * itself already). A node stalled or cut off inside a transaction keeps that transaction open,
 * with its row locks (a report's locked session row, the log head) and its advisory locks
 * (the takeover's, a cluster phase's) until its connection closes, and a blackholed
 * connection never does: the takeover would wait on them for good. Ending them rolls back
 * whatever it had in flight, so nothing it sent before the cut commits after. Its connections
 * carry `application_name` `warren <id>` (and `… listen`, `… lease`).
 */
async function endConnections(store: Store, node: string): Promise<void> {
  const ended = await sql<{ pid: number }>`select pid, pg_terminate_backend(pid) from pg_stat_activity
    where (application_name = ${`warren ${node}`} or application_name like ${`warren ${node} %`})
      and pid <> pg_backend_pid()`.execute(store.reader);
  // pg_terminate_backend only signals: the backend lets go of its locks when it exits, a moment
  // later. The takeover asks for its lock next, so wait (briefly) until they are gone; one
  // still there after that is ended by then or at the next heartbeat.
  const pids = ended.rows.map((r) => r.pid);
  for (let waited = 0; pids.length > 0 && waited < END_WAIT_MS; waited += END_POLL_MS) {
    const left = await sql<{ n: number }>`select count(*)::int as n from pg_stat_activity
      where pid in (${sql.join(pids)})`.execute(store.reader);
    if ((left.rows[0]?.n ?? 0) === 0) return;
    await delay(END_POLL_MS);
  }
}

/**
 * Round robin over the live nodes that can run a session: its runtime for a local one; for a
 * runner's, a node that runner (or another of its name) is connected to, as the node's last
 * renewal recorded it. None: the session waits, owned by nobody, for such a node to adopt it.
 */
function picker(live: LiveNode[]): (runtime: string, runner: string) => LiveNode | undefined {
  const next = new Map<string, number>();
  return (runtime, runner) => {
    const needs = runner === LOCAL_ENVIRONMENT ? runtime : runner;
    const able = live.filter((n) => n.runtimes.includes(needs));
    if (able.length === 0) return undefined;
    const i = next.get(needs) ?? 0;
    next.set(needs, i + 1);
    return able[i % able.length];
  };
}
