import type { Store } from '../../src/store/store.ts';
import type { Cluster } from './harness.ts';

/** A session row as the kernel would leave it, owned by `owner` under `epoch` (cluster tests of the store level). */
export async function addSession(
  store: Store,
  id: string,
  owner: string | null,
  epoch: number | null,
  more: { runner?: string; status?: string } = {},
): Promise<void> {
  await store.writer.write(async (tx) => {
    await tx.db
      .insertInto('sessions')
      .values({
        id,
        zone: 'default',
        parent_id: null,
        depth: 1,
        status: more.status ?? 'running',
        end_reason: null,
        runtime: 'command',
        runner: more.runner ?? 'local',
        title: null,
        spec: '{}',
        runtime_state: null,
        parent_close: 'terminate',
        token_hash: null,
        idempotency_key: null,
        last_message: null,
        suspend_reason: null,
        term_deadline: null,
        expires_at: null,
        max_turns: null,
        turns: 0,
        usage: '{}',
        created_at: 0,
        updated_at: 0,
        ended_at: null,
        tools: null,
        grants: null,
        end_detail: null,
        activity: null,
        budget: null,
        ancestors: null,
        budget_scope: null,
        budget_deadline: null,
        budget_breach: null,
        subtree_input_tokens: 0,
        subtree_output_tokens: 0,
        subtree_cost_usd: 0,
        subtree_turns: 0,
        owner_node: owner,
        owner_epoch: epoch,
      } as never)
      .execute();
  });
}

/** A session's status and owning node, read directly from the cluster's database. */
export const ownerOf = (c: Cluster, id: string) =>
  c.withStore((s) =>
    s.reader
      .selectFrom('sessions')
      .select(['status', 'owner_node'])
      .where('id', '=', id)
      .executeTakeFirstOrThrow(),
  );
