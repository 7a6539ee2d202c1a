import { type QueryExecutorProvider, type RawBuilder, sql } from 'kysely';
import type { FindingsTable } from './schema.ts';

/** What to look for: terms from query.ts (never raw user text), within one zone. */
export interface SearchQuery {
  zone: string;
  terms: readonly string[];
  /** `all`: every term must occur; `any`: at least one, more ranking higher. */
  match: 'all' | 'any';
  /** Only findings carrying every one of these tags. */
  tags?: readonly string[];
  /** Only findings of this task. */
  task?: string;
  /** Leave these finding ids out (already in a start context). */
  exclude?: readonly string[];
  limit: number;
}

export type FindingRow = Omit<FindingsTable, 'n'> & { n: number };

/** A finding found, with its relevance (higher is better; null without terms: newest first). */
export interface Hit {
  row: FindingRow;
  score: number | null;
}

/**
 * Full-text search over findings, one per backend (search-sqlite.ts, search-postgres.ts):
 * the same terms, the same matching, the same ranking order — title matches above tag
 * matches above body matches, more terms matched above fewer, newer first on a tie.
 */
export interface FindingSearch {
  /** `db`: what runs the query (the plugin's reader); the SQL names only the plugin's tables. */
  search(db: QueryExecutorProvider, q: SearchQuery): Promise<Hit[]>;
  /** How many findings of `zone` hold `term`, counting no further than `cap` + 1. */
  count(db: QueryExecutorProvider, zone: string, term: string, cap: number): Promise<number>;
}

/** A word found in more findings than this is too common to rank an any-word search by. */
export const COMMON_TERM = 1000;

/**
 * An any-word search ranks every finding that holds any of the words, so one common word
 * (`error`, `task`) makes it rank most of the zone: hundreds of milliseconds at 100k
 * findings, before every task session. So words held by more than `common` findings are
 * dropped from it, as stop words are — counted at most `common` + 1 deep, on both
 * backends alike. When every word is that common, the search needs all of them instead.
 */
export function selective(backend: FindingSearch, common = COMMON_TERM): FindingSearch {
  return {
    count: backend.count,
    async search(db, q) {
      if (q.match !== 'any' || q.terms.length < 2) return backend.search(db, q);
      const counts = await Promise.all(q.terms.map((t) => backend.count(db, q.zone, t, common)));
      const rare = q.terms.filter((_, i) => counts[i]! > 0 && counts[i]! <= common);
      if (rare.length > 0) return backend.search(db, { ...q, terms: rare });
      const held = q.terms.filter((_, i) => counts[i]! > 0);
      return held.length === 0 ? [] : backend.search(db, { ...q, terms: held, match: 'all' });
    },
  };
}

/** The findings columns a search returns. */
export const FINDING_COLUMNS = [
  'f.n',
  'f.id',
  'f.zone',
  'f.title',
  'f.body',
  'f.tags',
  'f.task_id',
  'f.session_id',
  'f.created_by',
  'f.created_at',
] as const;

/** The filters every backend applies, as SQL over `f` (knowledge_findings). */
export function filtersOf(q: SearchQuery): RawBuilder<unknown> {
  const parts: RawBuilder<unknown>[] = [sql`f.zone = ${q.zone}`];
  if (q.task !== undefined) parts.push(sql`f.task_id = ${q.task}`);
  for (const tag of q.tags ?? []) {
    parts.push(
      sql`exists (select 1 from knowledge_finding_tags t where t.finding_id = f.id and t.zone = ${q.zone} and t.tag = ${tag})`,
    );
  }
  if (q.exclude && q.exclude.length > 0) {
    parts.push(sql`f.id not in (${sql.join(q.exclude.map((id) => sql`${id}`))})`);
  }
  return sql.join(parts, sql` and `);
}

export const columnsSql = sql.raw(FINDING_COLUMNS.join(', '));

/** No terms: the newest findings that pass the filters (a listing, the same on both backends). */
export async function newest(db: QueryExecutorProvider, q: SearchQuery): Promise<Hit[]> {
  const r = await sql<FindingRow>`select ${columnsSql} from knowledge_findings f where ${filtersOf(q)}
    order by f.n desc limit ${q.limit}`.execute(db);
  return r.rows.map((row) => ({ row: normal(row), score: null }));
}

/** Numbers as numbers (PostgreSQL's bigint arrives as text). */
export const normal = (r: FindingRow): FindingRow => ({
  ...r,
  n: Number(r.n),
  created_at: Number(r.created_at),
});
