import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { it } from 'node:test';
import { selective } from '../../src/plugins/knowledge/search.ts';
import { postgresSearch } from '../../src/plugins/knowledge/search-postgres.ts';
import { sqliteSearch } from '../../src/plugins/knowledge/search-sqlite.ts';
import { call, forEachWarren } from '../helpers/warrens.ts';
import { create, fails } from '../orchestration/helpers.ts';
import { post, search, titles } from './helpers.ts';

/** This process's OS threads (Linux): a worker thread is one of them. */
const threads = () => Number(/Threads:\s+(\d+)/.exec(readFileSync('/proc/self/status', 'utf8'))?.[1]);

/**
 * Findings and their search: the same cases on SQLite (FTS5) and PostgreSQL (tsvector +
 * GIN) — same matches, same ranking order, no query a caller types is an error.
 */
forEachWarren('knowledge search', (t) => {
  it('matches every word (stemmed) by default, any word on request', async () => {
    const w = await t.open();
    await post(w, 'Cache misses after deploy', 'The caches are cold for two minutes');
    await post(w, 'Slow login', 'Password hashing takes 300 ms per request');
    await post(w, 'Deploy checklist', 'Run the migrations before the caching layer restarts');

    assert.deepEqual(titles(await search(w, { query: 'cache deploy' })).sort(), [
      'Cache misses after deploy',
      'Deploy checklist',
    ]);
    assert.deepEqual(titles(await search(w, { query: 'caching cold' })), ['Cache misses after deploy']);
    assert.deepEqual(titles(await search(w, { query: 'password cold' })), []);
    assert.deepEqual(titles(await search(w, { query: 'password cold', match: 'any' })).sort(), [
      'Cache misses after deploy',
      'Slow login',
    ]);
    // Stop words are no terms on either backend: "the" alone searches nothing, lists newest.
    const r = await call(w, 'knowledge_search', { query: 'the of and' });
    assert.deepEqual(r.terms, []);
    assert.equal(r.findings.length, 3);
    assert.equal(r.findings[0].title, 'Deploy checklist');
    assert.equal(r.findings[0].score, null);
  });

  it('ranks title over tags over body, and more words matched over fewer', async () => {
    const w = await t.open();
    await post(w, 'Notes', 'something about the kafka consumer lag');
    await post(w, 'Kafka consumer lag', 'seen on tuesday');
    await post(w, 'Queue notes', 'nothing here', { tags: ['kafka'] });
    assert.deepEqual(titles(await search(w, { query: 'kafka' })), [
      'Kafka consumer lag',
      'Queue notes',
      'Notes',
    ]);

    await post(w, 'Retries', 'retry storms amplify an outage');
    await post(w, 'Outage report', 'retries amplify; backoff with jitter fixes storms');
    const any = await search(w, { query: 'backoff jitter storms', match: 'any' });
    assert.equal(any[0].title, 'Outage report', 'three words matched beat one');
    assert.ok(any[0].score > any[1].score);
  });

  it('filters by tags and task, newest first without words', async () => {
    const w = await t.open();
    const a = await create(w, { title: 'a', hold: true });
    await post(w, 'one', 'alpha', { tags: ['db', 'perf'] });
    await post(w, 'two', 'alpha', { tags: ['db'], task: a.id });
    await post(w, 'three', 'beta', { tags: ['perf'] });
    assert.deepEqual(titles(await search(w, { tags: ['db'] })), ['two', 'one']);
    assert.deepEqual(titles(await search(w, { tags: ['db', 'perf'] })), ['one']);
    assert.deepEqual(titles(await search(w, { query: 'alpha', task: a.id })), ['two']);
    assert.deepEqual(titles(await search(w, { limit: 1 })), ['three']);
    const shown = (await call(w, 'knowledge_show', { id: (await search(w, { task: a.id }))[0].id })).finding;
    assert.equal(shown.task, a.id);
    assert.deepEqual(shown.tags, ['db']);
    await fails(call(w, 'knowledge_show', { id: 'fnd_nope' }), 'not_found');
  });

  it('never turns a query into syntax: operators, quotes and injections are plain words', async () => {
    const w = await t.open();
    await post(w, 'near miss', 'an OR b AND c; drop table findings');
    const hostile = [
      '"',
      '""',
      '"unbalanced',
      '*',
      'near*',
      'NEAR(a b)',
      'title:near',
      '^near',
      '(',
      ')) OR 1=1 --',
      "'; drop table findings; --",
      '!near & | miss',
      'a OR b',
      'NOT',
      '-near',
      '\\ \u0000 \u202e',
      'ñéår 𝔘𝔫𝔦𝔠𝔬𝔡𝔢 😀',
      '<->',
      ':*',
    ];
    for (const query of hostile) {
      const r = await call(w, 'knowledge_search', { query });
      assert.ok(Array.isArray(r.findings), `query ${JSON.stringify(query)}`);
      await call(w, 'knowledge_search', { query, match: 'any' });
    }
    // Operator words are words: the finding holding "drop table" is found by them.
    assert.deepEqual(titles(await search(w, { query: "'; drop table findings; --" })), ['near miss']);
    assert.deepEqual(titles(await search(w, { query: 'near: miss*' })), ['near miss']);
    assert.equal((await search(w, { query: 'near' })).length, 1, 'the table is still there');
    await fails(call(w, 'knowledge_search', { query: 'x'.repeat(2001) }), 'invalid_input');
  });

  it('an any-word search drops words too common to rank by, the same on both backends', async () => {
    const w = await t.open();
    for (let i = 0; i < 5; i++) await post(w, `report ${i}`, `the usual error, number ${i}`);
    await post(w, 'disk full', 'error: the disk filled up');
    const search = selective(t.kind === 'postgres' ? postgresSearch : sqliteSearch, 3);
    const q = { zone: 'default', match: 'any' as const, limit: 10 };
    const db = w.store.reader;
    assert.equal(await search.count(db, 'default', 'error', 3), 4, 'counted no deeper than cap + 1');
    assert.equal(await search.count(db, 'default', 'disk', 3), 1);
    // "error" is in six findings: over the cap, it does not rank; "disk" decides.
    const hits = await search.search(db, { ...q, terms: ['error', 'disk', 'absent'] });
    assert.deepEqual(titles(hits.map((h) => h.row)), ['disk full']);
    // Every word common: all of them are needed.
    const both = await search.search(db, { ...q, terms: ['error', 'usual'] });
    assert.equal(both.length, 5);
    assert.deepEqual(await search.search(db, { ...q, terms: ['absent', 'nowhere'] }), []);
    // Every-word searches are not touched.
    assert.equal((await search.search(db, { ...q, match: 'all', terms: ['error'] })).length, 6);
  });

  it('caps what a caller may post', async () => {
    const w = await t.open();
    await fails(post(w, 'big', 'x'.repeat(16 * 1024 + 1)), 'invalid_input', /body is 16385 bytes/);
    await fails(post(w, 'bad tag', 'b', { tags: ['Has Space'] }), 'invalid_input');
    await fails(
      post(w, 'many tags', 'b', { tags: Array.from({ length: 17 }, (_, i) => `t${i}`) }),
      'invalid_input',
    );
    await fails(post(w, 'x'.repeat(201), 'b'), 'invalid_input');
    await fails(post(w, 'no task', 'b', { task: 'task_nope' }), 'not_found');
    const ok = await post(w, 'ok', 'x'.repeat(16 * 1024), { tags: ['a', 'a', 'b'] });
    assert.deepEqual(ok.tags, ['a', 'b']);
  });

  it('bounds a query (issue 25): words past the 32nd are ignored, a query over 2,000 characters is refused', async () => {
    const w = await t.open();
    const words = Array.from({ length: 40 }, (_, i) => `word${String.fromCharCode(97 + (i % 26))}${i}`);
    await post(w, 'first word', words[0]!);
    await post(w, 'last word', words[39]!);
    const r = await call(w, 'knowledge_search', { query: words.join(' '), match: 'any' });
    assert.deepEqual(r.terms, words.slice(0, 32), 'the first 32 words, in order');
    assert.deepEqual(titles(r.findings), ['first word'], 'the 40th word was not searched for');
    await fails(
      call(w, 'knowledge_search', { query: `${'x'.repeat(1995)} more words` }),
      'invalid_input',
      /2000/,
    );
  });

  it('searches off the event loop on SQLite, and stops a search past limits.maxSearchMs', async (c) => {
    if (t.kind !== 'sqlite') return c.skip('PostgreSQL searches are async queries already');
    const w = await t.open({ maxSearchMs: 1 });
    // 200 findings holding every one of 20 words: an every-word search over them takes ~10 ms.
    const vocab = Array.from({ length: 20 }, (_, i) => `word${String.fromCharCode(97 + i)}x`);
    for (let n = 0; n < 200; n++)
      await post(
        w,
        `finding ${n}`,
        Array.from({ length: 1500 }, (_, i) => vocab[(n + i * 7) % 20]).join(' '),
      );
    const before = threads();
    const e = await fails(
      call(w, 'knowledge_search', { query: vocab.slice(0, 10).join(' ') }),
      'limit_exceeded',
      /the search ran past 1 ms and was stopped: search for fewer or rarer words/,
    );
    assert.ok(e);
    // The search ran in the read worker: a thread more, this process's.
    assert.ok(threads() > before, 'a read worker thread was started for the search');
    // The server goes on: a finding posted after it is shown.
    const later = await post(w, 'after the stopped search', 'still here');
    assert.equal(
      (await call(w, 'knowledge_show', { id: later.id })).finding.title,
      'after the stopped search',
    );
  });
});
