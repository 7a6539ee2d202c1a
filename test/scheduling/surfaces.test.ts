/**
 * The surfaces: MCP tools under warren's names and arizuko's (schedule_task, get_task,
 * update_task, cancel_task, list_tasks), gated at tier 1 like every tool; one real-clock fire.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { startHttp } from '../helpers/http.ts';
import { mcpClient, structured } from '../helpers/mcp.ts';
import { call, forEachWarren, idleScript, until } from '../helpers/warrens.ts';
import { create, firesOf, room } from './helpers.ts';

// biome-ignore lint/suspicious/noExplicitAny: tool outputs are checked by their own schemas
type Any = any;

const ARIZUKO = ['schedule_task', 'get_task', 'update_task', 'cancel_task', 'list_tasks'];

forEachWarren('scheduling: surfaces', (t) => {
  it('tier 1 sees and uses arizuko’s scheduler tools; tier 2 sees none of them', async () => {
    const h = await startHttp(t);
    const op = await mcpClient(h.url, h.key);
    const orch = structured<Any>(await op.callTool({ name: 'ipc_spawn', arguments: { script: idleScript } }));
    const tier1 = await mcpClient(h.url, h.tokenOf(orch.session.id));
    try {
      const names = (await tier1.listTools()).tools.map((x) => x.name);
      for (const n of [...ARIZUKO, 'schedule_create', 'schedule_run_now']) assert.ok(names.includes(n), n);

      const at = Date.now() + 3_600_000;
      const made = structured<Any>(
        await tier1.callTool({
          name: 'schedule_task',
          arguments: { name: 'later', at, task: { title: 'later', prompt: 'do it', hold: true } },
        }),
      ).schedule;
      assert.equal(made.nextFireAt, at);
      assert.equal(made.createdBy, orch.session.id);
      const got = structured<Any>(await tier1.callTool({ name: 'get_task', arguments: { id: made.id } }));
      assert.equal(got.schedule.name, 'later');
      const paused = structured<Any>(
        await tier1.callTool({ name: 'update_task', arguments: { id: made.id, paused: true } }),
      );
      assert.equal(paused.schedule.enabled, false);
      const listed = structured<Any>(await tier1.callTool({ name: 'list_tasks', arguments: {} }));
      assert.deepEqual(
        listed.schedules.map((x: Any) => x.id),
        [made.id],
      );
      const bad = await tier1.callTool({
        name: 'schedule_task',
        arguments: { cron: '0 25 * * *', stream: {} },
      });
      assert.equal(bad.isError, true);
      await tier1.callTool({ name: 'cancel_task', arguments: { id: made.id } });
      assert.equal(
        structured<Any>(await op.callTool({ name: 'schedule_list', arguments: {} })).schedules.length,
        0,
      );

      // A tier-2 agent (spawned by the orchestrator) is not given them.
      const agent = structured<Any>(
        await tier1.callTool({ name: 'ipc_spawn', arguments: { script: idleScript } }),
      );
      const tier2 = await mcpClient(h.url, h.tokenOf(agent.session.id));
      try {
        const own = (await tier2.listTools()).tools.map((x) => x.name);
        for (const n of [...ARIZUKO, 'schedule_create']) assert.ok(!own.includes(n), `tier 2 has ${n}`);
      } finally {
        await tier2.close();
      }
    } finally {
      await tier1.close();
      await op.close();
    }
  });

  it('real clock: a one-shot due in a second fires within a second of its time', async () => {
    const w = await t.open();
    await room(w);
    const due = Date.now() + 1000;
    const s = await create(w, { at: due, stream: { stream: 'ops', message: 'on time' } });
    const [fire] = await until(
      async () => {
        const f = await firesOf(w, s.id);
        return f.length > 0 && f[0].status === 'ok' ? f : null;
      },
      3000,
      'the fire',
    );
    assert.ok(fire.firedAt >= due, 'not early');
    assert.ok(fire.firedAt - due < 1000, `late by ${fire.firedAt - due} ms`);
    assert.ok(Date.now() - due < 2000);
    const transcript = await call(w, 'streams_transcript', { stream: 'ops' });
    assert.ok(transcript.messages.some((m: { text: string }) => m.text === 'on time'));
  });
});
