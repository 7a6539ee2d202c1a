/**
 * Tool lists by job over the real MCP surface (issue 24): a task worker's lean set, tool
 * groups per spawn and per task (never past the parent), the coordinator's tools for its
 * agents only, seed 002's names in no list, and an operator's list growing on request with
 * tools/list_changed.
 */
import assert from 'node:assert/strict';
import { after, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { startHttp } from '../helpers/http.ts';
import { mcpClient, structured } from '../helpers/mcp.ts';
import { forEachWarren, idleScript, until } from '../helpers/warrens.ts';

// biome-ignore lint/suspicious/noExplicitAny: results are read by the fields each test needs
type Any = any;

const ARIZUKO = ['schedule_task', 'get_task', 'update_task', 'cancel_task', 'list_tasks'];
const WORKER = [
  'ipc_list_fds',
  'ipc_read',
  'ipc_write',
  'knowledge_post',
  'knowledge_search',
  'knowledge_show',
  'task_complete',
  'task_escalate',
  'task_show',
  'workpad_read',
  'workpad_write',
];

forEachWarren('MCP tool lists by job', (t) => {
  const clients: Client[] = [];
  after(async () => {
    await Promise.allSettled(clients.map((c) => c.close()));
  });
  const connect = async (url: string, bearer: string) => {
    const c = await mcpClient(url, bearer);
    clients.push(c);
    return c;
  };
  const names = async (c: Client) => (await c.listTools()).tools.map((x) => x.name).sort();
  const ok = (r: unknown): Any => {
    const res = r as Any;
    if (res.isError) throw new Error(res.content[0].text);
    return structured(res);
  };
  const sessionOfTask = (c: Client, id: string) =>
    until(
      async () => ok(await c.callTool({ name: 'task_show', arguments: { id } })).task.sessionId ?? undefined,
    );

  it('a task worker sees its task’s tools; a task or a spawn names more groups, never past its parent', async () => {
    const h = await startHttp(t);
    const op = await connect(h.url, h.key);
    const plain = ok(
      await op.callTool({
        name: 'task_create',
        // An operator's task leads by default; this one names the worker's job.
        arguments: { title: 'a', prompt: 'a', spawn: { script: idleScript, job: 'worker' } },
      }),
    );
    const worker = await connect(h.url, h.tokenOf(await sessionOfTask(op, plain.task.id)));
    assert.deepEqual(await names(worker), WORKER);

    const more = ok(
      await op.callTool({
        name: 'task_create',
        arguments: {
          title: 'b',
          prompt: 'b',
          spawn: { script: idleScript, job: 'worker', toolGroups: ['schedules'] },
        },
      }),
    );
    const scheduler = await connect(h.url, h.tokenOf(await sessionOfTask(op, more.task.id)));
    const got = await names(scheduler);
    assert.ok(
      got.includes('schedule_create') && got.includes('task_show') && !got.includes('ipc_spawn'),
      String(got),
    );

    // An orchestrator without schedules cannot give them to its child: the child gets the rest.
    const lead = ok(await op.callTool({ name: 'ipc_spawn', arguments: { script: idleScript } }));
    const leadClient = await connect(h.url, h.tokenOf(lead.session.id));
    const child = ok(
      await leadClient.callTool({
        name: 'ipc_spawn',
        arguments: { script: idleScript, job: 'worker', toolGroups: ['schedules', 'sessions'] },
      }),
    );
    // Of the sessions group the lead holds session_show only (an orchestrator's), so that is all
    // the child gets of it; schedules, which the lead lacks, not at all.
    assert.deepEqual(
      [...child.session.tools].sort(),
      [...WORKER, 'session_show'].sort(),
      'nothing its parent lacks',
    );
    const bad = (await leadClient.callTool({
      name: 'ipc_spawn',
      arguments: { script: idleScript, toolGroups: ['no_such_group'] },
    })) as Any;
    assert.equal(bad.isError, true);
    assert.match(bad.content[0].text, /tool group "no_such_group"/);
  });

  it('the coordinator’s tools reach its agents only; seed 002’s names are in no list', async () => {
    const h = await startHttp(t);
    const op = await connect(h.url, h.key);
    const agent = ok(
      await op.callTool({ name: 'agent_spawn', arguments: { zoneId: 'default', application_id: 'app' } }),
    );
    const agentTools = await names(await connect(h.url, h.tokenOf(agent.agent.id)));
    assert.ok(agentTools.includes('service_register') && agentTools.includes('invocation_complete'));
    const plain = ok(await op.callTool({ name: 'ipc_spawn', arguments: { script: idleScript } }));
    const plainTools = await names(await connect(h.url, h.tokenOf(plain.session.id)));
    for (const n of ['service_register', 'invocation_complete', ...ARIZUKO])
      assert.ok(!plainTools.includes(n), n);
    const everything = await names(await connect(`${h.url}`, h.key));
    const all = (await (await mcpClientAll(h.url, h.key)).listTools()).tools.map((x) => x.name);
    for (const n of ARIZUKO)
      assert.ok(!everything.includes(n) && !all.includes(n), `${n} listed to an operator`);
    assert.ok(
      all.includes('schedule_create') && all.includes('register_group'),
      '?tools=all lists every group',
    );
  });

  const mcpClientAll = async (url: string, key: string) => {
    const c = await mcpClient(`${url}`, key, {});
    clients.push(c);
    await c.callTool({ name: 'tools_enable', arguments: { groups: ['all'] } });
    return c;
  };

  it('an operator turns groups on: tools/list_changed, a longer list; ?tools= starts with them', async () => {
    const h = await startHttp(t);
    const op = await connect(h.url, h.key);
    assert.equal(op.getServerCapabilities()?.tools?.listChanged, true);
    const before = await names(op);
    assert.ok(!before.includes('schedule_create'));
    let changed = 0;
    op.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changed++;
    });
    const groups = ok(await op.callTool({ name: 'tools_groups', arguments: {} }));
    const schedules = groups.groups.find((g: Any) => g.group === 'schedules');
    assert.equal(schedules.listed, 'none');
    assert.ok(schedules.tokens > 0 && schedules.tools.includes('schedule_create'));
    ok(await op.callTool({ name: 'tools_enable', arguments: { groups: ['schedules'] } }));
    await until(async () => changed > 0 || undefined);
    const after = await names(op);
    assert.ok(after.includes('schedule_create') && after.length > before.length);
    const bad = (await op.callTool({ name: 'tools_enable', arguments: { groups: ['nope'] } })) as Any;
    assert.equal(bad.isError, true);
    assert.match(bad.content[0].text, /no tool group "nope"/);

    const started = await mcpClient(`${h.url}`, h.key, {});
    clients.push(started);
    assert.ok(!(await names(started)).includes('register_group'));
    const viaQuery = await connectWithQuery(h.url, h.key, 'groups');
    assert.ok((await names(viaQuery)).includes('register_group'));
    // A session's set was fixed at spawn: no tools_* tools, no ?tools=.
    const s = ok(await op.callTool({ name: 'ipc_spawn', arguments: { script: idleScript } }));
    const sessionClient = await connect(h.url, h.tokenOf(s.session.id));
    assert.equal(sessionClient.getServerCapabilities()?.tools?.listChanged, false);
    assert.ok(!(await names(sessionClient)).includes('tools_enable'));
    await assert.rejects(connectWithQuery(h.url, h.tokenOf(s.session.id), 'schedules'), /fixed at spawn/);
  });

  const connectWithQuery = async (url: string, bearer: string, tools: string) => {
    const { Client } = await import('@modelcontextprotocol/sdk/client/index.js');
    const { StreamableHTTPClientTransport } = await import(
      '@modelcontextprotocol/sdk/client/streamableHttp.js'
    );
    const c = new Client({ name: 'warren-test', version: '0' });
    await c.connect(
      new StreamableHTTPClientTransport(new URL(`${url}/mcp?tools=${tools}`), {
        requestInit: { headers: { authorization: `Bearer ${bearer}` } },
      }),
    );
    clients.push(c);
    return c;
  };
});
