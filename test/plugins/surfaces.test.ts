/**
 * A disabled plugin leaves nothing behind on any surface: its REST routes, its MCP tools
 * and its generic syscall route answer not_found, naming the plugin; enabled, they work.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { startHttp } from '../helpers/http.ts';
import { mcpClient, structured } from '../helpers/mcp.ts';
import { forEachWarren } from '../helpers/warrens.ts';
import { probePlugin, withProbes } from './probe.ts';

forEachWarren(
  'plugin surfaces',
  (target) => {
    it('a loaded plugin is on REST and MCP; a disabled one is absent from both', async () => {
      const trace = { events: [], seen: 0 };
      const known = withProbes(probePlugin('alpha', trace), probePlugin('beta', trace));
      const h = await startHttp(target, { plugins: { known, seed: ['alpha'] } });

      const ok = await h.api('POST', '/v1/alpha/ping', { note: 'over REST' });
      assert.equal(ok.status, 200);
      assert.equal(ok.json.greeting, 'hello');
      const route = await h.api('POST', '/v1/beta/ping', {});
      assert.equal(route.status, 404);
      assert.match(route.json.error.message, /beta_ping belongs to the beta plugin/);
      const anon = await h.api('POST', '/v1/beta/ping', {}, { auth: null });
      assert.equal(anon.status, 401, 'still behind authentication');
      const generic = await h.api('POST', '/v1/syscalls/beta_ping', {});
      assert.equal(generic.status, 404);
      assert.equal(generic.json.error.code, 'not_found');
      assert.match(
        generic.json.error.message,
        /beta_ping belongs to the beta plugin, which this server does not load/,
      );

      const mcp = await mcpClient(h.url, h.key);
      try {
        // Every group listed (an operator's default list is its job's: docs/mcp.md).
        await mcp.callTool({ name: 'tools_enable', arguments: { groups: ['all'] } });
        const tools = (await mcp.listTools()).tools.map((t) => t.name);
        assert.ok(tools.includes('alpha_ping'));
        assert.ok(!tools.includes('beta_ping'));
        assert.ok(tools.includes('plugin_list'));
        const r = await mcp.callTool({ name: 'alpha_ping', arguments: { note: 'over MCP' } });
        assert.equal(structured<{ rows: number }>(r).rows, 2);
        await assert.rejects(mcp.callTool({ name: 'beta_ping', arguments: {} }), /Unknown tool: beta_ping/);
      } finally {
        await mcp.close();
      }
      const list = await h.api('GET', '/v1/plugins');
      assert.deepEqual(
        list.json.plugins.map((p: { name: string; loaded: boolean }) => [p.name, p.loaded]),
        [
          ['core', true],
          ['alpha', true],
          ['beta', false],
        ],
      );
    });
  },
  ['sqlite'],
);
