/**
 * `GET /metrics` over real HTTP, parsed with a strict Prometheus text parser: counters move
 * with traffic (events by type, MCP calls, HTTP requests), histograms have buckets,
 * sessions and agents are counted, and the scrape needs an operator credential.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { serve } from '../../src/app/server.ts';
import { startHttp } from '../helpers/http.ts';
import { mcpClient } from '../helpers/mcp.ts';
import { type Family, parsePrometheus, sampleValue } from '../helpers/prometheus.ts';
import { call, forEachWarren, idleScript, until } from '../helpers/warrens.ts';

async function scrape(
  url: string,
  key: string | null,
): Promise<{ status: number; type: string | null; text: string }> {
  const res = await fetch(`${url}/metrics`, { headers: key ? { authorization: `Bearer ${key}` } : {} });
  return { status: res.status, type: res.headers.get('content-type'), text: await res.text() };
}

const metricsOf = async (url: string, key: string): Promise<Map<string, Family>> => {
  const r = await scrape(url, key);
  assert.equal(r.status, 200, r.text);
  return parsePrometheus(r.text);
};

forEachWarren(
  'metrics',
  (t) => {
    describe('GET /metrics', () => {
      it('needs an operator: 401 without credentials, 403 for a session, Prometheus text for an operator', async () => {
        const h = await startHttp(t);
        assert.equal((await scrape(h.url, null)).status, 401);
        const s = (await h.api('POST', '/v1/sessions', { script: idleScript })).json;
        assert.equal((await scrape(h.url, h.tokenOf(s.session.id))).status, 403);
        const ok = await scrape(h.url, h.key);
        assert.equal(ok.status, 200);
        assert.match(ok.type ?? '', /^text\/plain; version=0\.0\.4/);
        const m = parsePrometheus(ok.text);
        for (const name of [
          'warren_events_appended_total',
          'warren_commit_batch_units',
          'warren_commit_duration_seconds',
          'warren_delivery_latency_seconds',
          'warren_sessions',
          'warren_agent_processes',
          'warren_mcp_calls_total',
          'warren_mcp_sessions',
          'warren_http_requests_total',
          'warren_reconcile_phase_duration_seconds',
          'warren_reconcile_phase_errors_total',
        ]) {
          assert.ok(m.has(name), `${name} is exposed`);
        }
        assert.equal(m.get('warren_commit_duration_seconds')!.type, 'histogram');
        // Nothing from prom-client's default (global) collectors: this registry is the warren's own.
        assert.ok(![...m.keys()].some((n) => n.startsWith('process_') || n.startsWith('nodejs_')));
      });

      it('counters move with traffic: events by type, HTTP requests by route and status, MCP calls by tool and outcome', async () => {
        const h = await startHttp(t);
        const before = await metricsOf(h.url, h.key);
        const spawned = sampleValue(before, 'warren_events_appended_total', { type: 'session.spawned' });
        const created = sampleValue(before, 'warren_http_requests_total', {
          method: 'POST',
          route: '/v1/sessions',
          status: '200',
        });

        const a = (await h.api('POST', '/v1/sessions', { script: idleScript })).json;
        await h.api('POST', '/v1/sessions', { script: idleScript });
        assert.equal((await h.api('GET', '/v1/sessions/ses_nope')).status, 404);
        const mcp = await mcpClient(h.url, h.key);
        try {
          await mcp.callTool({ name: 'ps', arguments: {} });
          await mcp.callTool({ name: 'ps', arguments: {} });
          const bad = await mcp.callTool({ name: 'session_show', arguments: { id: 'ses_nope' } });
          assert.equal(bad.isError, true);
        } finally {
          await mcp.close();
        }

        const after = await metricsOf(h.url, h.key);
        assert.equal(
          sampleValue(after, 'warren_events_appended_total', { type: 'session.spawned' }),
          spawned + 2,
        );
        assert.equal(
          sampleValue(after, 'warren_http_requests_total', {
            method: 'POST',
            route: '/v1/sessions',
            status: '200',
          }),
          created + 2,
        );
        assert.equal(
          sampleValue(after, 'warren_http_requests_total', {
            method: 'GET',
            route: '/v1/sessions/:id',
            status: '404',
          }),
          1,
          'the route pattern, not the URL with its id',
        );
        assert.equal(sampleValue(after, 'warren_mcp_calls_total', { tool: 'ps', outcome: 'ok' }), 2);
        assert.equal(
          sampleValue(after, 'warren_mcp_calls_total', { tool: 'session_show', outcome: 'not_found' }),
          1,
        );
        assert.ok(
          sampleValue(after, 'warren_log_head_seq') >= (await h.head()) - 1,
          'the head gauge follows the log',
        );
        // Histograms: the parser checked buckets rise and +Inf equals the count; the count moved.
        const batches = sampleValue(after, 'warren_commit_duration_seconds_count', { outcome: 'ok' });
        assert.ok(batches > sampleValue(before, 'warren_commit_duration_seconds_count', { outcome: 'ok' }));
        assert.ok(sampleValue(after, 'warren_commit_batch_units_count') >= batches);
        const buckets = after
          .get('warren_commit_duration_seconds')!
          .samples.filter((s) => s.name.endsWith('_bucket'));
        assert.ok(buckets.length >= 10, 'buckets are exposed');

        // Sessions by status and runtime, agents alive: read when scraped.
        await until(
          async () =>
            (await call(h.warren, 'session_show', { id: a.session.id })).session.status !== 'pending',
        );
        await new Promise((r) => setTimeout(r, 2100)); // past the session counts' cache window
        const live = await metricsOf(h.url, h.key);
        const scripts =
          sampleValue(live, 'warren_sessions', { runtime: 'script', status: 'running' }) +
          sampleValue(live, 'warren_sessions', { runtime: 'script', status: 'idle' });
        assert.equal(scripts, 2);
        assert.equal(sampleValue(live, 'warren_agent_processes', { state: 'alive' }), 2);
      });

      it('publish→deliver latency and reconcile phases are observed', async () => {
        const h = await startHttp(t);
        const w = h.warren;
        const agent = await call(w, 'ipc_spawn', {
          script: { steps: [{ wait: { as: 'got' } }, { listen: {} }] },
        });
        await until(() => w.kernel.agentCounts().alive === 1);
        await call(w, 'send', { id: agent.session.id, text: 'hello' });
        await until(
          async () =>
            sampleValue(await metricsOf(h.url, h.key), 'warren_delivery_latency_seconds_count') >= 1,
        );

        w.kernel.addReconcilePhase({
          name: 'test:broken',
          run: async () => {
            throw new Error('on purpose');
          },
        });
        await w.kernel.reconcile();
        const m = await metricsOf(h.url, h.key);
        assert.ok(sampleValue(m, 'warren_reconcile_phase_duration_seconds_count', { phase: 'ttl' }) >= 1);
        assert.equal(sampleValue(m, 'warren_reconcile_phase_errors_total', { phase: 'test:broken' }), 1);
        assert.equal(sampleValue(m, 'warren_reconcile_phase_errors_total', { phase: 'ttl' }), 0);
      });

      it('two warrens in one process keep separate numbers; metrics off answers 404 and loads nothing', async () => {
        const a = await startHttp(t);
        const b = await startHttp(t, { metrics: false });
        await a.api('POST', '/v1/sessions', { script: idleScript });
        const other = await startHttp(t);
        const m = await metricsOf(other.url, other.key);
        assert.equal(sampleValue(m, 'warren_events_appended_total', { type: 'session.spawned' }), 0);
        assert.equal(b.warren.metrics, null);
        const off = await scrape(b.url, b.key);
        assert.equal(off.status, 404);
        assert.match(off.text, /metrics are off/);
      });
    });
  },
  ['sqlite'],
);

forEachWarren(
  'metrics on PostgreSQL',
  (t) => {
    it('scrapes and counts events on PostgreSQL too', async () => {
      const h = await startHttp(t);
      await h.api('POST', '/v1/sessions', { script: idleScript });
      const m = await metricsOf(h.url, h.key);
      assert.equal(sampleValue(m, 'warren_events_appended_total', { type: 'session.spawned' }), 1);
      assert.ok(sampleValue(m, 'warren_commit_duration_seconds_count', { outcome: 'ok' }) > 0);
    });
  },
  ['postgres'],
);

describe('metrics.public', () => {
  const quiet = { write: () => true };
  for (const [host, open] of [
    ['127.0.0.1', true],
    ['0.0.0.0', false],
  ] as const) {
    it(`on ${host}: ${open ? 'scraped without credentials' : 'ignored, credentials still needed'}`, async () => {
      const dir = mkdtempSync(join(tmpdir(), 'warren-metrics-public-'));
      const running = await serve(
        {
          host,
          port: 0,
          dataDir: dir,
          durability: 'process',
          demo: false,
          logLevel: 'silent',
          metrics: { public: true },
        },
        quiet,
      );
      try {
        const port = new URL(running.url.replace('0.0.0.0', '127.0.0.1')).port;
        const r = await scrape(`http://127.0.0.1:${port}`, null);
        assert.equal(r.status, open ? 200 : 401);
        if (open) assert.ok(parsePrometheus(r.text).has('warren_events_appended_total'));
        // The rest of the API never opens up.
        assert.equal((await fetch(`http://127.0.0.1:${port}/v1/sessions`)).status, 401);
      } finally {
        await running.stop();
        rmSync(dir, { recursive: true, force: true });
      }
    });
  }
});
