import assert from 'node:assert/strict';
import { it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CompiledQuery } from 'kysely';
import { corePlugin } from '../../src/plugins/core/plugin.ts';
import type { Warren } from '../../src/syscalls/warren.ts';
import { operator } from '../../src/vocab/principal.ts';
import { startHttp } from '../helpers/http.ts';
import { mcpClients } from '../helpers/mcp.ts';
import { scansOf } from '../helpers/plans.ts';
import { asSession, call, forEachWarren, idleScript } from '../helpers/warrens.ts';
import { fillSessions } from '../store/fill-log.ts';

const SESSION = { type: 'ref/resource' as const, uri: 'warren://sessions/{id}' };
const STREAM = { type: 'ref/resource' as const, uri: 'warren://streams/{name}/transcript{?before,limit}' };

const complete = async (
  c: Client,
  ref: { type: 'ref/resource'; uri: string } | { type: 'ref/prompt'; name: string },
  name: string,
  value: string,
) => (await c.complete({ ref, argument: { name, value } })).completion;

const raw = (w: Warren, sql: string, params: unknown[] = []) =>
  w.store.writer.write((tx) => tx.db.executeQuery(CompiledQuery.raw(sql, params)));

/**
 * Completion through the official SDK client, on both backends: prefix matching is a range
 * on each database's own index and collation.
 */
forEachWarren('MCP completion', (t) => {
  const { connect, closeAll } = mcpClients();

  it('session ids and stream names by prefix, at most 100, indexed among 10,000 sessions', async () => {
    const h = await startHttp(t);
    try {
      const w = h.warren;
      // ses_1 … ses_10000, every one live with an open lifecycle stream.
      await fillSessions(w.store, { sessions: 10_000, liveEvery: 1 });
      const c = await connect(h, h.key);

      const ids = await complete(c, SESSION, 'id', 'ses_1');
      assert.equal(ids.values.length, 100);
      assert.equal(ids.hasMore, true, '1,112 ids start with ses_1');
      assert.ok(ids.values.every((v) => v.startsWith('ses_1')));
      assert.deepEqual(ids.values, [...ids.values].sort(), 'in id order');
      const one = await complete(c, SESSION, 'id', 'ses_9999');
      assert.deepEqual(one, { values: ['ses_9999'], hasMore: false });
      assert.deepEqual((await complete(c, SESSION, 'id', 'nope')).values, []);

      const names = await complete(c, STREAM, 'name', 'lifecycle:ses_999');
      assert.deepEqual(names.values.slice(0, 3), [
        'lifecycle:ses_999',
        'lifecycle:ses_9990',
        'lifecycle:ses_9991',
      ]);
      assert.equal(names.values.length, 11);
      assert.equal(names.hasMore, false);
      const many = await complete(c, STREAM, 'name', 'lifecycle:ses_99');
      assert.equal(many.values.length, 100);
      assert.equal(many.hasMore, true, '111 names match');

      // Indexed: each answer costs the matches, not the table. Proved by the plans of the
      // queries the answers ran (no full pass over sessions, streams or fds, among 10,000
      // sessions with fresh statistics); the time is bench's (npm run bench -- completion).
      await w.store.analyze();
      for (const prefix of ['ses_5', 'ses_77', 'ses_1234', '']) {
        const { queries, scans } = await scansOf(w.store, ['sessions', 'streams', 'fds'], async () => {
          await complete(c, SESSION, 'id', prefix);
          await complete(c, STREAM, 'name', `lifecycle:${prefix}`);
        });
        assert.ok(queries >= 2, `${prefix}: ${queries} queries seen`);
        assert.deepEqual(scans, [], `${prefix}: full scans`);
      }
      // An over-long prefix is cut, not sent whole to the database.
      assert.deepEqual((await complete(c, SESSION, 'id', 'x'.repeat(100_000))).values, []);
    } finally {
      await closeAll();
    }
  });

  it('a session completes only what it may see: its subtree, the streams it holds', async () => {
    const h = await startHttp(t);
    try {
      const w = h.warren;
      // Completions ride on session_show and streams_transcript: groups an orchestrator asks for.
      const lead = (await call(w, 'ipc_spawn', { script: idleScript, toolGroups: ['sessions', 'streams'] }))
        .session.id;
      const asLead = asSession(lead);
      const child = (
        await call(w, 'ipc_spawn', { script: idleScript, pipe: 'async', toolGroups: ['streams'] }, asLead)
      ).session.id;
      const stranger = (await call(w, 'ipc_spawn', { script: idleScript })).session.id;
      await call(w, 'streams_create', { name: 'operators-only' });

      const c = await connect(h, h.tokenOf(lead));
      assert.deepEqual((await complete(c, SESSION, 'id', 'ses_')).values.sort(), [lead, child].sort());
      assert.deepEqual(
        (await complete(c, { type: 'ref/prompt', name: 'review' }, 'session', '')).values.sort(),
        [lead, child].sort(),
      );
      const streams = (await complete(c, STREAM, 'name', '')).values;
      assert.deepEqual(
        streams.sort(),
        [`lifecycle:${child}`, `lifecycle:${lead}`, `pipe:${child}`, `pipe:${lead}`, `stdin:${lead}`].sort(),
      );
      assert.ok(!streams.some((s) => s.includes(stranger) || s === 'operators-only'));

      // What warren does not complete answers with nothing, not an error.
      assert.deepEqual(
        await complete(c, { type: 'ref/prompt', name: 'test_prompt_with_arguments' }, 'arg1', 'test'),
        { values: [], hasMore: false },
      );
      assert.deepEqual(
        (await complete(c, { type: 'ref/prompt', name: 'orchestrate' }, 'goal', 'a')).values,
        [],
      );
      assert.deepEqual(
        (await complete(c, { type: 'ref/resource', uri: 'test://x/{id}' }, 'id', '')).values,
        [],
      );

      // The child (an orchestrator too, at depth 2) completes only its own subtree: itself.
      const agent = await connect(h, h.tokenOf(child));
      assert.deepEqual((await complete(agent, SESSION, 'id', '')).values, [child]);
      assert.deepEqual(
        (await complete(agent, STREAM, 'name', '')).values.sort(),
        [`lifecycle:${child}`, `pipe:${child}`, `stdin:${child}`].sort(),
      );
    } finally {
      await closeAll();
    }
  });

  it('task ids when the orchestration plugin is loaded; persona names of the caller’s zone', async () => {
    const h = await startHttp(t);
    try {
      const w = h.warren;
      const c = await connect(h, h.key);
      const task = { type: 'ref/prompt' as const, name: 'orchestrate' };
      for (const [id, zone] of [
        ['task_a1', 'default'],
        ['task_a2', 'default'],
        ['task_b1', 'default'],
        ['task_a9', 'team-b'],
      ])
        await raw(
          w,
          `insert into orchestration_tasks (id, zone, title, prompt, status, created_by, created_at, updated_at)
           values ('${id}', '${zone}', 't', 'p', 'pending', 'operator:admin', 1, 1)`,
        );
      assert.deepEqual(await complete(c, task, 'task', 'task_a'), {
        values: ['task_a1', 'task_a2'],
        hasMore: false,
      });

      assert.deepEqual((await complete(c, task, 'persona', '')).values, [], 'no personas yet: nothing');
      for (const name of ['reviewer', 'researcher', 'coder'])
        await w.call(operator(), 'persona_create', { name, runtime: 'script' });
      await w.call(operator('admin', 'team-b'), 'persona_create', { name: 'rebel', runtime: 'script' });
      assert.deepEqual((await complete(c, task, 'persona', 're')).values, ['researcher', 'reviewer']);
    } finally {
      await closeAll();
    }
  });

  it('no task ids without the orchestration plugin', async () => {
    const h = await startHttp(t, { plugins: { known: [corePlugin] } });
    try {
      const c = await connect(h, h.key);
      assert.deepEqual(
        (await complete(c, { type: 'ref/prompt', name: 'orchestrate' }, 'task', 'task_')).values,
        [],
      );
    } finally {
      await closeAll();
    }
  });
});
