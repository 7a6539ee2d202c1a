import { sql } from 'kysely';
import { columnsSql, type FindingRow, type FindingSearch, filtersOf, newest, normal } from './search.ts';

/**
 * PostgreSQL: the generated `search` tsvector and its GIN index. Each term is a bound
 * parameter of plainto_tsquery (which takes any text as words, never as operators), the
 * terms joined by && (all) or || (any); ts_rank weighs title (A) over tags (B) over body (D).
 */
export const postgresSearch: FindingSearch = {
  async search(db, q) {
    if (q.terms.length === 0) return newest(db, q);
    const parts = q.terms.map((t) => sql`plainto_tsquery('english', ${t})`);
    const query = sql.join(parts, q.match === 'all' ? sql` && ` : sql` || `);
    const r = await sql<FindingRow & { score: number }>`
      select ${columnsSql}, ts_rank(f.search, q.q) as score
      from knowledge_findings f, (select ${query} as q) q
      where f.search @@ q.q and ${filtersOf(q)}
      order by score desc, f.n desc
      limit ${q.limit}`.execute(db);
    return r.rows.map(({ score, ...row }) => ({ row: normal(row), score: Number(score) }));
  },
  async count(db, zone, term, cap) {
    const r = await sql<{ n: string }>`select count(*) as n from (
        select 1 from knowledge_findings f
        where f.search @@ plainto_tsquery('english', ${term}) and f.zone = ${zone} limit ${cap + 1}) x`.execute(
      db,
    );
    return Number(r.rows[0]?.n ?? 0);
  },
};
