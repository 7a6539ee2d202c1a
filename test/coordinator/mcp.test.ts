import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { mcpClients, structured } from '../helpers/mcp.ts';
import { forEachWarren, until } from '../helpers/warrens.ts';
import { coordinatorWarren } from './helpers.ts';

// biome-ignore lint/suspicious/noExplicitAny: tool results are checked by the tests that read them
type Any = any;

const Z = '/zones/default';

/** An agent that does nothing by itself: its MCP client (the test) is its mind. */
const asleep = { script: { steps: [{ sleep: 600_000 }] } };

forEachWarren('coordinator tools over MCP (Streamable HTTP)', (target) => {
  const clients = mcpClients();
  after(() => clients.closeAll());

  describe('services, invocations and delegations through a real MCP client', () => {
    it('registers a service, heartbeats, reads an invocation with ipc_read and completes it with invocation_complete', async () => {
      const h = await coordinatorWarren(target, { deadlineSweepIntervalMs: 40, outbox: { intervalMs: 40 } });
      const agent = (
        await h.api('POST', `${Z}/agents`, { application_id: 'app', runtime: 'script', config: asleep })
      ).json.agent;
      const me = await clients.connect(h, h.tokenOf(agent.id));
      const tools = (await me.listTools()).tools.map((t) => t.name);
      for (const n of ['service_register', 'service_heartbeat', 'invocation_complete', 'ipc_read'])
        assert.ok(tools.includes(n), n);

      const tool = async (name: string, args: Record<string, unknown>) => {
        const r = (await me.callTool({ name, arguments: args })) as Any;
        assert.ok(!r.isError, `${name}: ${r.content?.[0]?.text}`);
        return structured<Any>(r);
      };
      const svc = (
        await tool('service_register', {
          zoneId: 'default',
          agentId: agent.id,
          endpoint_url: 'http://127.0.0.1:9/mcp-agent',
        })
      ).service;
      assert.equal(svc.health, 'starting');
      const beat = (
        await tool('service_heartbeat', { zoneId: 'default', agentId: agent.id, serviceId: svc.id })
      ).service;
      assert.equal(beat.health, 'healthy');

      // The operator (a Caracal client) enqueues; the agent finds it on its stdin.
      const inv = (
        await h.api('POST', `${Z}/invocations`, {
          service_id: svc.id,
          idempotency_key: 'mcp-1',
          method: 'echo',
          params: { say: 'hi' },
        })
      ).json.invocation;
      const fds = (await tool('ipc_list_fds', {})).fds as Array<{ fd: number; role?: string }>;
      const seen: string[] = [];
      const line = await until(
        async () => {
          for (const f of fds) {
            const r = await tool('ipc_read', { fd: f.fd });
            for (const m of r.messages as Array<{ text: string }>) seen.push(m.text);
          }
          return seen.find((t) => t.startsWith('[INVOCATION]'));
        },
        20_000,
        'the invocation to reach the agent’s fds',
      );
      const body = JSON.parse(line.slice('[INVOCATION] '.length, line.lastIndexOf('}') + 1));
      assert.equal(body.id, inv.id);
      assert.deepEqual(body.params, { say: 'hi' });

      // Its own running invocations, then the answer with the tool.
      const mine = (await tool('invocation_list', { zoneId: 'default', status: 'running' })).invocations;
      assert.deepEqual(
        mine.map((x: Any) => x.id),
        [inv.id],
      );
      const done = (
        await tool('invocation_complete', {
          zoneId: 'default',
          id: inv.id,
          status: 'succeeded',
          result: { echo: 'hi' },
        })
      ).invocation;
      assert.equal(done.status, 'succeeded');
      const got = (await h.api('GET', `${Z}/invocations/${inv.id}`)).json.invocation;
      assert.equal(got.status, 'succeeded');
      assert.deepEqual(got.result, { echo: 'hi' });

      // A second completion is a typed tool error, not a protocol failure.
      const again = (await me.callTool({
        name: 'invocation_complete',
        arguments: { zoneId: 'default', id: inv.id, status: 'failed' },
      })) as Any;
      assert.equal(again.isError, true);
      assert.match(again.content[0].text, /conflict/);
    });

    it('an operator drives delegations (create, list, revoke cascade) and the outbox through MCP tools', async () => {
      const h = await coordinatorWarren(target);
      const spawn = async () =>
        (await h.api('POST', `${Z}/agents`, { application_id: 'app' })).json.agent.id as string;
      const [a, b, c] = [await spawn(), await spawn(), await spawn()];
      const op = await clients.connect(h, h.key);
      const tool = async (name: string, args: Record<string, unknown>) => {
        const r = (await op.callTool({ name, arguments: args })) as Any;
        assert.ok(!r.isError, `${name}: ${r.content?.[0]?.text}`);
        return structured<Any>(r);
      };
      const ab = (
        await tool('delegation_create', {
          zoneId: 'default',
          source_agent_id: a,
          target_agent_id: b,
          constraints: { scopes: ['read', 'write'] },
        })
      ).delegation;
      const bc = (
        await tool('delegation_create', {
          zoneId: 'default',
          source_agent_id: b,
          target_agent_id: c,
          constraints: { scopes: ['read'] },
        })
      ).delegation;
      assert.equal(bc.parent_edge_id, ab.id);
      const wide = (await op.callTool({
        name: 'delegation_create',
        arguments: {
          zoneId: 'default',
          source_agent_id: c,
          target_agent_id: a,
          constraints: { scopes: ['admin'] },
        },
      })) as Any;
      assert.equal(wide.isError, true);
      assert.match(wide.content[0].text, /widens_grant/);
      const listed = (await tool('delegation_list', { zoneId: 'default' })).delegations.map((d: Any) => d.id);
      assert.deepEqual(listed.sort(), [ab.id, bc.id].sort());
      const revoked = (await tool('delegation_revoke', { zoneId: 'default', edgeId: ab.id })).revoked;
      assert.deepEqual([...revoked].sort(), [ab.id, bc.id].sort());
      const events = (await tool('outbox_list', { zoneId: 'default' })).events;
      assert.ok(events.length > 0, 'revocations wrote outbox events');
    });
  });
});
