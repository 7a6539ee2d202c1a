import { type Kysely, sql } from 'kysely';
import type { DialectKind } from '../dialect.ts';

/**
 * Budgets per subtree (docs/budgets.md). On each session: its budget, the usage of its whole
 * subtree (its own included) as columns a report adds to in place, where it sits in the tree
 * (`ancestors`: the path a report sums up; `budget_scope`: the budgeted sessions on it, so an
 * unbudgeted report reads nothing), its wall-time deadline and its breach. Its own usage stays
 * where it was (`usage` JSON, `turns`).
 *
 * Existing rows are brought in: their ancestors from the parent links, their subtree totals
 * from the own usage of everything under them.
 */
export function budgets(kind: DialectKind) {
  const big = kind === 'postgres' ? 'bigint' : 'integer';
  return {
    async up(db: Kysely<unknown>): Promise<void> {
      const add = (name: string, type: 'text' | 'bigint' | 'integer' | 'double precision', zero: boolean) =>
        db.schema
          .alterTable('sessions')
          .addColumn(name, type, (c) => (zero ? c.notNull().defaultTo(0) : c))
          .execute();
      await add('budget', 'text', false);
      await add('ancestors', 'text', false);
      await add('budget_scope', 'text', false);
      await add('budget_deadline', big, false);
      await add('budget_breach', 'text', false);
      await add('subtree_input_tokens', big, true);
      await add('subtree_output_tokens', big, true);
      await add('subtree_cost_usd', 'double precision', true);
      await add('subtree_turns', big, true);
      // The wall-time phase reads what is due; partial, like the TTL and SIGTERM deadlines.
      await db.schema
        .createIndex('sessions_budget_deadline')
        .on('sessions')
        .column('budget_deadline')
        .where(sql.ref('budget_deadline'), 'is not', null)
        .execute();
      await backfill(db);
    },
  };
}

interface Old {
  id: string;
  parent_id: string | null;
  usage: string;
  turns: number;
}

async function backfill(db: Kysely<unknown>): Promise<void> {
  const rows = (await sql<Old>`select id, parent_id, usage, turns from sessions`.execute(db)).rows;
  const byId = new Map(rows.map((r) => [r.id, r]));
  const totals = new Map<string, { i: number; o: number; c: number; t: number }>();
  const ancestorsOf = (r: Old): string[] => {
    const out: string[] = [];
    // Bounded by the table: a corrupt parent link cannot loop it.
    for (
      let p = r.parent_id ? byId.get(r.parent_id) : undefined;
      p?.parent_id && out.length < rows.length;
    ) {
      out.push(p.id);
      p = byId.get(p.parent_id);
    }
    return out;
  };
  for (const r of rows) {
    let own: Record<string, unknown> = {};
    try {
      own = JSON.parse(r.usage) as Record<string, unknown>;
    } catch {}
    const n = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) && v > 0 ? v : 0);
    const d = { i: n(own.inputTokens), o: n(own.outputTokens), c: n(own.costUsd), t: Number(r.turns) || 0 };
    const ancestors = r.parent_id ? ancestorsOf(r) : [];
    for (const id of [r.id, ...ancestors]) {
      const sum = totals.get(id) ?? { i: 0, o: 0, c: 0, t: 0 };
      sum.i += d.i;
      sum.o += d.o;
      sum.c += d.c;
      sum.t += d.t;
      totals.set(id, sum);
    }
    if (ancestors.length > 0)
      await sql`update sessions set ancestors = ${JSON.stringify(ancestors)} where id = ${r.id}`.execute(db);
  }
  for (const [id, s] of totals) {
    if (s.i + s.o + s.c + s.t === 0) continue;
    await sql`update sessions set subtree_input_tokens = ${Math.round(s.i)}, subtree_output_tokens = ${Math.round(s.o)},
      subtree_cost_usd = ${s.c}, subtree_turns = ${s.t} where id = ${id}`.execute(db);
  }
}
