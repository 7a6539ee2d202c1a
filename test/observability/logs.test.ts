/**
 * Structured logs: a real server process with LOG_LEVEL=debug writes JSON lines on stderr
 * whose request ids match the ids error responses carry; `silent` writes none; and the
 * kernel's diagnostics (reconcile phases, commit listeners, plugin subscribers) go to the
 * injected logger with their text.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { definePlugin } from '../../src/contract/plugin.ts';
import { corePlugin } from '../../src/plugins/core/plugin.ts';
import type { Log } from '../../src/util/log.ts';
import { operator } from '../../src/vocab/principal.ts';
import { startServer } from '../helpers/server.ts';
import { forEachWarren } from '../helpers/warrens.ts';

const jsonLines = (out: string): Array<Record<string, unknown>> =>
  out
    .split('\n')
    .filter((l) => l.startsWith('{'))
    .map((l) => JSON.parse(l) as Record<string, unknown>);

describe('logs of a server process', () => {
  const dir = mkdtempSync(join(tmpdir(), 'warren-logs-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('LOG_LEVEL=debug: JSON lines on stderr, with the request id an error response carries', async () => {
    const server = await startServer({ dataDir: join(dir, 'debug'), env: { LOG_LEVEL: 'debug' } });
    try {
      const res = await fetch(`${server.url}/v1/sessions/ses_nope`, {
        headers: { authorization: `Bearer ${server.key}` },
      });
      assert.equal(res.status, 404);
      const body = (await res.json()) as { error: { code: string; requestId: string } };
      const id = body.error.requestId;
      assert.match(id, /^req_[0-9a-f]{20}$/);
      assert.equal(res.headers.get('x-request-id'), id);
      const unauthorized = await fetch(`${server.url}/v1/sessions`);
      const unauthorizedId = ((await unauthorized.json()) as { error: { requestId: string } }).error
        .requestId;

      const lines = await waitForLines(server.output, (ls) =>
        ls.some((l) => l.reqId === unauthorizedId && l.msg === 'request completed'),
      );
      for (const l of lines) {
        assert.equal(typeof l.level, 'number');
        assert.equal(typeof l.time, 'number');
        assert.equal(typeof l.msg, 'string');
      }
      const mine = lines.filter((l) => l.reqId === id);
      assert.ok(
        mine.some((l) => l.msg === 'incoming request'),
        'the request is logged under its id',
      );
      assert.ok(mine.some((l) => l.code === 'not_found' && l.status === 404));
      const done = mine.find((l) => l.msg === 'request completed') as
        | { res: { statusCode: number } }
        | undefined;
      assert.equal(done?.res.statusCode, 404);
      assert.ok(lines.some((l) => l.msg === 'warren listening' && l.url === server.url));
    } finally {
      await server.stop();
    }
  });

  it('LOG_LEVEL=silent: not one log line; info (the default) has no per-request lines', async () => {
    const quiet = await startServer({ dataDir: join(dir, 'silent'), env: { LOG_LEVEL: 'silent' } });
    try {
      await fetch(`${quiet.url}/v1/sessions/ses_nope`, { headers: { authorization: `Bearer ${quiet.key}` } });
    } finally {
      await quiet.stop();
    }
    assert.deepEqual(jsonLines(quiet.output()), []);
    assert.match(quiet.output(), /warren listening on/, 'stdout still says where it listens');

    const info = await startServer({ dataDir: join(dir, 'info') });
    try {
      await fetch(`${info.url}/v1/sessions/ses_nope`, { headers: { authorization: `Bearer ${info.key}` } });
    } finally {
      await info.stop();
    }
    const lines = jsonLines(info.output());
    assert.ok(lines.some((l) => l.msg === 'warren listening'));
    assert.ok(!lines.some((l) => l.reqId !== undefined), 'request lines are debug');
  });

  it('--log-level is refused when it is not a level', async () => {
    await assert.rejects(
      startServer({ dataDir: join(dir, 'bad'), args: ['--log-level', 'loud'] }),
      /--log-level "loud": .*expected one of "fatal"\|"error"\|"warn"\|"info"\|"debug"\|"trace"\|"silent"/,
    );
  });
});

async function waitForLines(
  output: () => string,
  done: (lines: Array<Record<string, unknown>>) => boolean,
): Promise<Array<Record<string, unknown>>> {
  const end = Date.now() + 5000;
  for (;;) {
    const lines = jsonLines(output());
    if (done(lines) || Date.now() > end) return lines;
    await new Promise((r) => setTimeout(r, 20));
  }
}

/** A logger that keeps what it is given. */
function capture(): Log & { lines: Array<{ level: string; obj: Record<string, unknown>; msg: string }> } {
  const lines: Array<{ level: string; obj: Record<string, unknown>; msg: string }> = [];
  const at = (level: string) => (obj: Record<string, unknown>, msg: string) =>
    void lines.push({ level, obj, msg });
  return { lines, error: at('error'), warn: at('warn'), info: at('info'), debug: at('debug') };
}

forEachWarren(
  'the injected logger',
  (t) => {
    it('gets reconcile phase failures, commit listener failures and plugin subscriber failures, with their text', async () => {
      const log = capture();
      const boom = definePlugin({
        name: 'boom',
        version: '0.0.0',
        summary: 'a subscriber that throws',
        start: () => ({
          onCommit() {
            throw new Error('subscriber bug');
          },
        }),
      });
      const w = await t.open({ log, plugins: { known: [corePlugin, boom] } });
      w.kernel.addReconcilePhase({
        name: 'test:broken',
        run: async () => {
          throw new Error('phase bug');
        },
      });
      await w.kernel.reconcile();
      const stop = w.store.writer.onCommit(() => {
        throw new Error('listener bug');
      });
      await w.call(operator(), 'streams_create', { name: 'x' });
      stop();
      const errors = log.lines.filter((l) => l.level === 'error');
      const phase = errors.find((l) => l.msg === 'reconcile phase test:broken failed');
      assert.equal(phase?.obj.phase, 'test:broken');
      assert.equal((phase?.obj.err as Error | undefined)?.message, 'phase bug');
      assert.ok(errors.some((l) => l.msg === 'post-commit listener failed'));
      assert.ok(errors.some((l) => l.msg === 'plugin boom subscriber failed' && l.obj.plugin === 'boom'));
    });
  },
  ['sqlite'],
);
