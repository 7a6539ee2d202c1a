/**
 * The knowledge plugin (findings, full-text search), on SQLite (FTS5) and PostgreSQL
 * (tsvector + GIN):
 * - knowledgeSearch: 100,000 findings, written in transactions of 1,000 rows (through the
 *   real table, so the index triggers / generated column run). Then `knowledge_search`
 *   latency p50/p99 through the syscall, for two-word queries (every word) and for
 *   prompt-like eight-word queries (any word: what start context runs before each task
 *   session). Baseline, in the same run: the same two-word queries as a `LIKE '%w%'` scan
 *   (newest ten, both words) over the same rows.
 * - Posting throughput: `knowledge_post` through the syscall, 16 callers at once, against
 *   the bulk fill rate of the same table (rows/s in 1,000-row transactions).
 */
import { sql } from 'kysely';
import type { KnowledgeInstance } from '../src/plugins/knowledge/syscalls.ts';
import { Warren } from '../src/syscalls/warren.ts';
import { operator } from '../src/vocab/principal.ts';
import { tempDir } from './lib/tempdir.ts';
import { type BenchRow, dropSchema, pgProblem } from './store.ts';

const PG_URL = process.env.WARREN_TEST_PG_URL ?? 'postgres://postgres@127.0.0.1:5432/test';
const op = operator('bench');
const round = (n: number, digits = 2) => Number(n.toFixed(digits));
const pct = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? Number.NaN;
const benchKernel = { resumeOnStart: false, reconcileIntervalMs: 60_000 };

/** A deterministic generator (mulberry32): the same corpus every run. */
function rng(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** 5,000 made-up words, drawn with a Zipf-like skew (a few common, most rare), as real text is. */
const VOCAB = Array.from({ length: 5000 }, (_, i) => {
  const syll = ['ka', 'lo', 'mi', 'ren', 'tu', 'sa', 'vex', 'dor', 'pli', 'zan', 'qua', 'fes'];
  let w = '';
  let n = i + 7;
  while (n > 0) {
    w += syll[n % syll.length];
    n = Math.floor(n / syll.length);
  }
  return w;
});
const word = (r: () => number) => VOCAB[Math.floor(VOCAB.length * r() ** 2.2)]!;
const words = (r: () => number, n: number) => Array.from({ length: n }, () => word(r)).join(' ');

async function fill(w: Warren, n: number, r: () => number): Promise<number> {
  const tables = w.plugins.get<KnowledgeInstance>('knowledge').tables;
  const t0 = performance.now();
  const BATCH = 1000;
  for (let done = 0; done < n; done += BATCH) {
    await tables.write(async (tx) => {
      const rows = Array.from({ length: Math.min(BATCH, n - done) }, (_, k) => ({
        id: `fnd_bench${done + k}`,
        zone: 'default',
        title: words(r, 4 + Math.floor(r() * 5)),
        body: words(r, 30 + Math.floor(r() * 30)),
        tags: `tag${Math.floor(r() * 50)}`,
        task_id: null,
        session_id: null,
        created_by: 'operator:bench',
        created_at: tx.now,
      }));
      // Under SQLite's and PostgreSQL's bound-parameter caps per statement.
      for (let i = 0; i < rows.length; i += 100) {
        await tx.db
          .insertInto('knowledge_findings')
          .values(rows.slice(i, i + 100))
          .execute();
      }
    });
  }
  return n / ((performance.now() - t0) / 1000);
}

async function timed(queries: number, fn: (i: number) => Promise<unknown>): Promise<number[]> {
  const lat: number[] = [];
  for (let i = 0; i < queries; i++) {
    const s = performance.now();
    await fn(i);
    lat.push(performance.now() - s);
  }
  return lat.sort((a, b) => a - b);
}

async function onBackend(kind: 'sqlite' | 'postgres', w: Warren, total: number): Promise<BenchRow[]> {
  const r = rng(42);
  const fillRate = await fill(w, total, r);
  if (kind === 'postgres') await sql`analyze knowledge_findings`.execute(w.store.reader);
  const q = rng(7);
  // Mid-frequency words: found in some hundreds of findings, as a real query is.
  const mid = () => VOCAB[200 + Math.floor(q() * 800)]!;
  const pairs = Array.from({ length: 200 }, () => [mid(), mid()] as const);
  const prompts = Array.from({ length: 200 }, () => words(q, 8));

  const all = await timed(pairs.length, (i) =>
    w.call(op, 'knowledge_search', { query: pairs[i]!.join(' ') }),
  );
  const any = await timed(prompts.length, (i) =>
    w.call(op, 'knowledge_search', { query: prompts[i], match: 'any', limit: 5 }),
  );
  const like = await timed(20, (i) =>
    sql`select id from knowledge_findings where zone = 'default' and (title like ${`%${pairs[i]![0]}%`} or body like ${`%${pairs[i]![0]}%`})
        and (title like ${`%${pairs[i]![1]}%`} or body like ${`%${pairs[i]![1]}%`}) order by n desc limit 10`.execute(
      w.store.reader,
    ),
  );

  // Posting through the syscall, 16 callers at once.
  const posts = 2000;
  let next = 0;
  const t0 = performance.now();
  const pr = rng(9);
  await Promise.all(
    Array.from({ length: 16 }, async () => {
      while (next++ < posts) {
        await w.call(op, 'knowledge_post', { title: words(pr, 6), body: words(pr, 45), tags: ['bench'] });
      }
    }),
  );
  const postRate = posts / ((performance.now() - t0) / 1000);

  const name = (s: string) => `knowledge ${kind}: ${s}`;
  return [
    {
      name: name(`search p50, ${total / 1000}k findings, 2 words (all)`),
      value: round(pct(all, 0.5)),
      unit: 'ms',
      baseline: round(pct(like, 0.5)),
      ratio: round(pct(all, 0.5) / pct(like, 0.5), 3),
      note: 'baseline: the same queries as a LIKE scan (newest 10), same rows',
    },
    { name: name('search p99, 2 words (all)'), value: round(pct(all, 0.99)), unit: 'ms' },
    { name: name('search p50, 8-word prompt (any, top 5)'), value: round(pct(any, 0.5)), unit: 'ms' },
    { name: name('search p99, 8-word prompt (any, top 5)'), value: round(pct(any, 0.99)), unit: 'ms' },
    {
      name: name('knowledge_post throughput'),
      value: round(postRate, 0),
      unit: 'posts/s',
      baseline: round(fillRate, 0),
      ratio: round(postRate / fillRate, 3),
      note: `${posts} posts, 16 callers; baseline: bulk insert, 1,000-row transactions`,
    },
  ];
}

export async function knowledgeSearch(opts: { findings?: number } = {}): Promise<BenchRow[]> {
  const total = opts.findings ?? 100_000;
  const rows: BenchRow[] = [];
  {
    using tmp = tempDir();
    const w = await Warren.open({ dataDir: tmp.dir, kernel: benchKernel });
    try {
      rows.push(...(await onBackend('sqlite', w, total)));
    } finally {
      await w.close();
    }
  }
  const problem = await pgProblem();
  if (problem) {
    rows.push({ name: 'knowledge postgres', value: Number.NaN, unit: '', note: `SKIPPED: ${problem}` });
    return rows;
  }
  const schema = `bench_${Math.random().toString(36).slice(2, 10)}`;
  try {
    const w = await Warren.open({ db: PG_URL, schema, kernel: benchKernel });
    try {
      rows.push(...(await onBackend('postgres', w, total)));
    } finally {
      await w.close();
    }
  } finally {
    await dropSchema(schema);
  }
  return rows;
}

export const knowledgeBenches = { knowledgeSearch };
