import type { Kysely } from 'kysely';
import type { Kernel } from '../../kernel/kernel.ts';
import { keysetPage } from '../../store/paging.ts';
import { WarrenError } from '../../vocab/errors.ts';
import { operator, type Principal } from '../../vocab/principal.ts';
import { iso, rowInZone } from './rows.ts';
import type {
  CoordInvocationsTable,
  CoordinatorDb,
  CoordinatorTables,
  CoordinatorTx,
  InvocationStatus,
} from './schema.ts';
import { serviceRow } from './services.ts';

/** How a failed or timed-out attempt is retried: exponential backoff with full jitter. */
export interface RetryPolicy {
  max_attempts: number;
  initial_backoff_ms: number;
  max_backoff_ms: number;
  multiplier: number;
}

export interface EnqueueInput {
  zoneId: string;
  service_id: string;
  idempotency_key: string;
  method: string;
  params?: unknown;
  source_session_id?: string | undefined;
  timeout_ms?: number | undefined;
  retry_policy?: Partial<RetryPolicy> | undefined;
}

const parse = (s: string | null) => (s === null ? null : (JSON.parse(s) as unknown));

export const invocationView = (r: CoordInvocationsTable) => ({
  id: r.id,
  zone_id: r.zone,
  service_id: r.service_id,
  source_session_id: r.source_session_id,
  target_session_id: r.target_session_id,
  idempotency_key: r.idempotency_key,
  method: r.method,
  params: parse(r.params),
  status: r.status,
  attempts: r.attempts,
  max_attempts: r.max_attempts,
  timeout_ms: r.timeout_ms,
  retry_policy: parse(r.retry_policy),
  error: parse(r.error),
  result: parse(r.result),
  deadline_at: iso(r.deadline_at),
  next_attempt_at: iso(r.next_attempt_at),
  started_at: iso(r.started_at),
  completed_at: iso(r.completed_at),
  created_at: iso(r.created_at) as string,
  updated_at: iso(r.updated_at) as string,
});

export const TERMINAL: readonly InvocationStatus[] = ['succeeded', 'failed', 'timed_out', 'canceled', 'dead'];

/**
 * Enqueue: the row is inserted unless (zone, service, key) has one already — the unique
 * index decides, so a storm of duplicates makes one record and every caller gets it.
 */
export async function enqueueInvocation(kernel: Kernel, tables: CoordinatorTables, i: EnqueueInput) {
  return tables.write(async (tx) => {
    const svc = await serviceRow(tx.db, i.zoneId, undefined, i.service_id);
    const db = tx.db;
    const policy = i.retry_policy
      ? {
          max_attempts: i.retry_policy.max_attempts ?? 3,
          initial_backoff_ms: i.retry_policy.initial_backoff_ms ?? 1000,
          max_backoff_ms: i.retry_policy.max_backoff_ms ?? 60_000,
          multiplier: i.retry_policy.multiplier ?? 2,
        }
      : null;
    const row: CoordInvocationsTable = {
      id: kernel.ids.id('inv'),
      zone: i.zoneId,
      service_id: svc.id,
      source_session_id: i.source_session_id ?? null,
      target_session_id: svc.agent_id,
      idempotency_key: i.idempotency_key,
      method: i.method,
      params: JSON.stringify(i.params ?? {}),
      status: 'pending',
      attempts: 0,
      max_attempts: policy?.max_attempts ?? 1,
      timeout_ms: i.timeout_ms ?? null,
      retry_policy: policy ? JSON.stringify(policy) : null,
      error: null,
      result: null,
      deadline_at: null,
      next_attempt_at: tx.now,
      started_at: null,
      completed_at: null,
      created_at: tx.now,
      updated_at: tx.now,
    };
    await db
      .insertInto('coordinator_invocations')
      .values(row)
      .onConflict((oc) => oc.columns(['zone', 'service_id', 'idempotency_key']).doNothing())
      .execute();
    const stored = await db
      .selectFrom('coordinator_invocations')
      .selectAll()
      .where('zone', '=', i.zoneId)
      .where('service_id', '=', svc.id)
      .where('idempotency_key', '=', i.idempotency_key)
      .executeTakeFirstOrThrow();
    return { invocation: invocationView(stored), created: stored.id === row.id };
  });
}

export const invocationRow = (db: Kysely<CoordinatorDb>, zone: string, id: string) =>
  rowInZone(db, 'invocation', zone, id);

/**
 * The row as it is now inside a sweep's transaction, if it is still `status`: the sweep
 * picked its ids from the reader before taking the writer, and a row may have moved since.
 */
async function stillIn(tx: CoordinatorTx, id: string, status: InvocationStatus) {
  const row = await tx.db
    .selectFrom('coordinator_invocations')
    .selectAll()
    .where('id', '=', id)
    .executeTakeFirst();
  return row?.status === status ? row : undefined;
}

/** The message an agent reads on its stdin: a tag, then the invocation as JSON on one line. */
export const invocationMessage = (r: CoordInvocationsTable) =>
  `[INVOCATION] ${JSON.stringify({ id: r.id, zone_id: r.zone, service_id: r.service_id, method: r.method, params: parse(r.params), attempt: r.attempts, deadline_at: iso(r.deadline_at) })} — complete it with invocation_complete`;

/**
 * Deliver ready pending invocations: each becomes `running` (attempt + 1, its deadline
 * set) and its message is written to the target's stdin in the same transaction, so an
 * invocation is delivered exactly when it is marked running. A target whose session has
 * stopped fails the attempt.
 */
export async function dispatchPending(
  kernel: Kernel,
  tables: CoordinatorTables,
  random: () => number,
  limit = 200,
): Promise<number> {
  const now = kernel.clock.now();
  const ready = await tables.reader
    .selectFrom('coordinator_invocations')
    .select('id')
    .where('status', '=', 'pending')
    .where('next_attempt_at', '<=', now)
    .orderBy('next_attempt_at')
    .limit(limit)
    .execute();
  if (ready.length === 0) return 0;
  return tables.write(async (tx) => {
    let n = 0;
    for (const { id } of ready) {
      const db = tx.db;
      const row = await stillIn(tx, id, 'pending');
      if (!row) continue;
      const target = (await kernel.sessionStateIn(tx, row.target_session_id))?.status ?? null;
      const attempt: CoordInvocationsTable = {
        ...row,
        status: 'running',
        attempts: row.attempts + 1,
        started_at: tx.now,
        deadline_at: row.timeout_ms !== null ? tx.now + row.timeout_ms : null,
        updated_at: tx.now,
      };
      await db
        .updateTable('coordinator_invocations')
        .set({
          status: attempt.status,
          attempts: attempt.attempts,
          started_at: attempt.started_at,
          deadline_at: attempt.deadline_at,
          updated_at: tx.now,
        })
        .where('id', '=', id)
        .execute();
      if (target === null || target === 'stopped') {
        await failAttempt(
          tx,
          attempt,
          { code: 'target_gone', message: 'the target session has stopped' },
          random,
          'failed',
        );
        continue;
      }
      await kernel.sendIn(
        tx,
        operator('coordinator', row.zone),
        row.target_session_id,
        invocationMessage(attempt),
      );
      n++;
    }
    return n;
  });
}

/** Backoff before attempt `attempts + 1`: exponential, capped, with full jitter. */
export function backoffMs(policy: RetryPolicy, attempts: number, random: () => number): number {
  const cap = Math.min(
    policy.max_backoff_ms,
    policy.initial_backoff_ms * policy.multiplier ** (attempts - 1),
  );
  return Math.round(cap / 2 + random() * (cap / 2));
}

/**
 * An attempt failed (or timed out): back to `pending` at its backoff while attempts
 * remain, else `dead` when a retry policy ran out, else `failed` / `timed_out`.
 */
export async function failAttempt(
  tx: CoordinatorTx,
  row: CoordInvocationsTable,
  error: Record<string, unknown>,
  random: () => number,
  terminal: 'failed' | 'timed_out',
): Promise<InvocationStatus> {
  const policy = row.retry_policy ? (JSON.parse(row.retry_policy) as RetryPolicy) : null;
  let status: InvocationStatus = terminal;
  let next = row.next_attempt_at;
  if (policy && row.attempts < row.max_attempts) {
    status = 'pending';
    next = tx.now + backoffMs(policy, row.attempts, random);
  } else if (policy) status = 'dead';
  await tx.db
    .updateTable('coordinator_invocations')
    .set({
      status,
      error: JSON.stringify(error),
      next_attempt_at: next,
      deadline_at: status === 'pending' ? null : row.deadline_at,
      completed_at: status === 'pending' ? null : tx.now,
      updated_at: tx.now,
    })
    .where('id', '=', row.id)
    .execute();
  return status;
}

/** The deadline enforcer: running invocations past their deadline time out (then retry or die). */
export async function enforceDeadlines(
  kernel: Kernel,
  tables: CoordinatorTables,
  random: () => number,
  limit = 500,
): Promise<number> {
  const now = kernel.clock.now();
  const late = await tables.reader
    .selectFrom('coordinator_invocations')
    .select('id')
    .where('status', '=', 'running')
    .where('deadline_at', '<=', now)
    .limit(limit)
    .execute();
  if (late.length === 0) return 0;
  return tables.write(async (tx) => {
    let n = 0;
    for (const { id } of late) {
      const row = await stillIn(tx, id, 'running');
      if (!row || row.deadline_at === null || row.deadline_at > tx.now) continue;
      await failAttempt(
        tx,
        row,
        { code: 'timed_out', message: `no result within ${row.timeout_ms} ms` },
        random,
        'timed_out',
      );
      n++;
    }
    return n;
  });
}

/** The target's report. Only the target session completes; only a running invocation is completed. */
export async function completeInvocation(
  tables: CoordinatorTables,
  caller: Principal,
  random: () => number,
  i: { zoneId: string; id: string; status: 'succeeded' | 'failed'; result?: unknown; error?: unknown },
) {
  return tables.write(async (tx) => {
    const row = await invocationRow(tx.db, i.zoneId, i.id);
    if (caller.kind !== 'session' || caller.sessionId !== row.target_session_id) {
      throw new WarrenError(
        'forbidden',
        `only the target session ${row.target_session_id} completes invocation ${i.id}`,
      );
    }
    if (row.status !== 'running') {
      throw new WarrenError('conflict', `invocation ${i.id} is ${row.status}, not running`, {
        status: row.status,
      });
    }
    if (i.status === 'succeeded') {
      await tx.db
        .updateTable('coordinator_invocations')
        .set({
          status: 'succeeded',
          result: JSON.stringify(i.result ?? null),
          completed_at: tx.now,
          updated_at: tx.now,
        })
        .where('id', '=', row.id)
        .execute();
    } else {
      await failAttempt(tx, row, { code: 'failed', detail: i.error ?? null }, random, 'failed');
    }
    return invocationView(await invocationRow(tx.db, i.zoneId, i.id));
  });
}

/** Cancel a pending or running invocation; a finished one is a conflict. */
export async function cancelInvocation(tables: CoordinatorTables, zone: string, id: string) {
  return tables.write(async (tx) => {
    const row = await invocationRow(tx.db, zone, id);
    if (TERMINAL.includes(row.status)) {
      throw new WarrenError('conflict', `invocation ${id} is already ${row.status}`, { status: row.status });
    }
    await tx.db
      .updateTable('coordinator_invocations')
      .set({ status: 'canceled', completed_at: tx.now, updated_at: tx.now })
      .where('id', '=', id)
      .execute();
    return invocationView(await invocationRow(tx.db, zone, id));
  });
}

/** A session's own invocations (what it has to answer), or a zone's for an operator. */
export async function listInvocations(
  tables: CoordinatorTables,
  caller: Principal,
  zone: string,
  q: { status?: InvocationStatus | undefined; limit?: number | undefined; cursor?: string | undefined },
) {
  const limit = q.limit ?? 100;
  let sel = tables.reader.selectFrom('coordinator_invocations').selectAll().where('zone', '=', zone);
  if (caller.kind === 'session') sel = sel.where('target_session_id', '=', caller.sessionId);
  if (q.status) sel = sel.where('status', '=', q.status);
  if (q.cursor) sel = sel.where('id', '>', q.cursor);
  const { items, next } = await keysetPage(limit, (n) => sel.orderBy('id').limit(n).execute());
  return { invocations: items.map(invocationView), next };
}
