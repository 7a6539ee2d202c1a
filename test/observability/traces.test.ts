/**
 * OpenTelemetry traces: with an OTLP/HTTP endpoint configured, every syscall is a span with
 * the session, zone and seq attributes, exported to a tiny OTLP receiver on 127.0.0.1; a
 * caller's `traceparent` header makes the span join its trace; a spawned `command` agent
 * sees TRACEPARENT naming the spawn's span. Off by default: no tracer, no TRACEPARENT.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import { startHttp } from '../helpers/http.ts';
import { mcpClient } from '../helpers/mcp.ts';
import { forEachWarren, idleScript, until } from '../helpers/warrens.ts';

interface OtlpSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  attributes: Array<{ key: string; value: { stringValue?: string; intValue?: string | number } }>;
  status?: { code?: number };
}

/** An OTLP/HTTP receiver that keeps the spans it is sent (JSON encoding). */
async function receiver(): Promise<{ url: string; spans: OtlpSpan[]; types: string[]; server: Server }> {
  const spans: OtlpSpan[] = [];
  const types: string[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8').on('data', (c: string) => {
      body += c;
    });
    req.on('end', () => {
      types.push(String(req.headers['content-type']));
      if (req.url === '/v1/traces') {
        const doc = JSON.parse(body) as {
          resourceSpans: Array<{ scopeSpans: Array<{ spans: OtlpSpan[] }> }>;
        };
        for (const rs of doc.resourceSpans) for (const ss of rs.scopeSpans) spans.push(...ss.spans);
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
    });
  });
  await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
  const { port } = server.address() as AddressInfo;
  return { url: `http://127.0.0.1:${port}/v1/traces`, spans, types, server };
}

const attr = (s: OtlpSpan, key: string): string | number | undefined => {
  const v = s.attributes.find((a) => a.key === key)?.value;
  if (!v) return undefined;
  return v.stringValue ?? (v.intValue !== undefined ? Number(v.intValue) : undefined);
};

const TRACE = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT = '00f067aa0ba902b7';
const MCP_TRACE = '0af7651916cd43dd8448eb211c80319c';

forEachWarren(
  'traces',
  (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'warren-traces-'));
    after(() => rmSync(dir, { recursive: true, force: true }));

    it('a span per syscall with session, zone and seq; traceparent joins; a command agent gets TRACEPARENT', async () => {
      const otlp = await receiver();
      try {
        const h = await startHttp(t, { tracing: { url: otlp.url, flushMs: 50 } });
        const seen = join(dir, 'traceparent');
        const spawned = await h.api(
          'POST',
          '/v1/sessions',
          {
            runtime: 'command',
            command: ['sh', '-c', `printf '%s' "$TRACEPARENT" > ${seen}; exec sleep 30`],
            title: 'traced',
          },
          { headers: { traceparent: `00-${TRACE}-${PARENT}-01` } },
        );
        assert.equal(spawned.status, 200, JSON.stringify(spawned.json));
        const child = spawned.json.session.id as string;
        const room = (await h.api('POST', '/v1/streams', { name: 'traced-room' })).json;
        const wrote = (await h.api('POST', `/v1/fds/${room.fd}/write`, { message: 'hi' })).json;
        assert.equal(typeof wrote.seq, 'number');
        await h.api('GET', '/v1/sessions/ses_nope');
        const mcp = await mcpClient(h.url, h.key, { traceparent: `00-${MCP_TRACE}-${PARENT}-01` });
        await mcp.callTool({ name: 'ps', arguments: {} });
        await mcp.close();

        const tp = await until(
          () => existsSync(seen) && readFileSync(seen, 'utf8'),
          10_000,
          'the agent to write TRACEPARENT',
        );
        await until(() => otlp.spans.some((s) => s.name === 'ps'), 20_000, 'spans to arrive');
        await h.warren.close();

        assert.ok(
          otlp.types.every((ct) => ct.startsWith('application/json')),
          otlp.types.join(),
        );
        const spawn = otlp.spans.find((s) => s.name === 'ipc_spawn');
        assert.ok(spawn, `an ipc_spawn span among ${otlp.spans.map((s) => s.name).join(', ')}`);
        assert.equal(spawn.traceId, TRACE, 'the caller’s traceparent is the parent');
        assert.equal(spawn.parentSpanId, PARENT);
        assert.equal(attr(spawn, 'warren.zone'), 'default');
        assert.equal(attr(spawn, 'warren.session'), child);
        assert.equal(attr(spawn, 'warren.syscall'), 'ipc_spawn');
        assert.equal(tp, `00-${TRACE}-${spawn.spanId}-01`, 'the agent joins the spawn’s trace');

        const write = otlp.spans.find((s) => s.name === 'ipc_write');
        assert.ok(write);
        assert.equal(attr(write, 'warren.seq'), wrote.seq);
        assert.notEqual(write.traceId, TRACE, 'a call without traceparent starts its own trace');
        const ps = otlp.spans.find((s) => s.name === 'ps');
        assert.equal(ps?.traceId, MCP_TRACE, 'an MCP client’s traceparent header is the parent too');
        const create = otlp.spans.find((s) => s.name === 'streams_create');
        assert.ok(create);
        const failed = otlp.spans.find((s) => s.name === 'session_show');
        assert.equal(failed?.status?.code, 2, 'a failed syscall is an error span');
        assert.equal(failed && attr(failed, 'warren.error.code'), 'not_found');
        assert.equal(failed && attr(failed, 'warren.session'), 'ses_nope');
      } finally {
        otlp.server.close();
      }
    });

    it('in-process agents’ syscalls are child spans of the call that started them', async () => {
      const otlp = await receiver();
      try {
        const h = await startHttp(t, { tracing: { url: otlp.url, flushMs: 50 } });
        const a = await h.api('POST', '/v1/sessions', {
          script: {
            steps: [
              { call: { syscall: 'ipc_write', input: { fd: 1, message: 'hello parent' } } },
              ...idleScript.steps,
            ],
          },
        });
        assert.equal(a.status, 200, JSON.stringify(a.json));
        await until(
          () => otlp.spans.some((s) => s.name === 'ipc_write'),
          10_000,
          'the agent’s ipc_write span',
        );
        await h.warren.close();
        const spawn = otlp.spans.find((s) => s.name === 'ipc_spawn')!;
        const write = otlp.spans.find((s) => s.name === 'ipc_write')!;
        assert.equal(write.traceId, spawn.traceId);
        assert.equal(attr(write, 'warren.session'), a.json.session.id);
      } finally {
        otlp.server.close();
      }
    });

    it('is off by default: no TRACEPARENT in an agent’s environment', async () => {
      const h = await startHttp(t);
      const seen = join(dir, 'untraced');
      await h.api('POST', '/v1/sessions', {
        runtime: 'command',
        command: ['sh', '-c', `printf '[%s]' "$TRACEPARENT" > ${seen}; exec sleep 30`],
      });
      const tp = await until(
        () => existsSync(seen) && readFileSync(seen, 'utf8'),
        10_000,
        'the agent to start',
      );
      assert.equal(tp, '[]');
    });
  },
  ['sqlite'],
);
