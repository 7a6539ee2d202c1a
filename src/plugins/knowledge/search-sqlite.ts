import { sql } from 'kysely';
import { fts5Match } from './query.ts';
import { columnsSql, type FindingRow, type FindingSearch, filtersOf, newest, normal } from './search.ts';

/**
 * SQLite: FTS5 over knowledge_findings (external content, kept by triggers). bm25 with column
 * weights title 10, body 1, tags 4 — the order PostgreSQL's A/D/B weights give. The MATCH
 * expression is built from terms only (quoted), and bound as a parameter.
 */
export const sqliteSearch: FindingSearch = {
  async search(db, q) {
    if (q.terms.length === 0) return newest(db, q);
    const r = await sql<FindingRow & { score: number }>`
      select ${columnsSql}, -bm25(knowledge_findings_fts, 10.0, 1.0, 4.0) as score
      from knowledge_findings_fts join knowledge_findings f on f.n = knowledge_findings_fts.rowid
      where knowledge_findings_fts match ${fts5Match(q.terms, q.match)} and ${filtersOf(q)}
      order by score desc, f.n desc
      limit ${q.limit}`.execute(db);
    return r.rows.map(({ score, ...row }) => ({ row: normal(row), score: Number(score) }));
  },
  async count(db, zone, term, cap) {
    const r = await sql<{ n: number }>`select count(*) as n from (
        select 1 from knowledge_findings_fts join knowledge_findings f on f.n = knowledge_findings_fts.rowid
        where knowledge_findings_fts match ${fts5Match([term], 'all')} and f.zone = ${zone} limit ${cap + 1})`.execute(
      db,
    );
    return Number(r.rows[0]?.n ?? 0);
  },
};
