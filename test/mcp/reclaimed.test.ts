/**
 * MCP sessions are reclaimed (issue 24): 100 sessions abandoned the ways Claude Code abandons
 * them, and the caller still gets a new one.
 *
 * - `warren mcp` relays (real child processes) stopped by SIGINT, by SIGTERM, and by the end
 *   of their input: each ends its own session. They come in batches that fill the caller's
 *   cap exactly, with expiry far off: a relay that left its session behind would make the
 *   next batch's initialize a 429.
 * - HTTP clients that never send `DELETE /mcp`: reclaimed by expiry (set short here), while a
 *   client that holds its GET stream open is not idle and keeps its session.
 * The live count (`warren_mcp_sessions`, GET /metrics) returns to zero.
 */
import assert from 'node:assert/strict';
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer, type Socket } from 'node:net';
import { it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { liveMcpSessions, mcp429s } from '../helpers/claude-mcp-runs.ts';
import { type HttpWarren, startHttp } from '../helpers/http.ts';
import { mcpClient } from '../helpers/mcp.ts';
import { reapOnExit } from '../helpers/reaper.ts';
import { binEnv, WARREN_BIN } from '../helpers/server.ts';
import { forEachWarren, until, WAIT_MS } from '../helpers/warrens.ts';

/** A relay run from the sources (no fresh build) compiles them at start: seconds on a busy machine. */
const START_MS = 90_000;

const line = (m: Record<string, unknown>) => `${JSON.stringify({ jsonrpc: '2.0', ...m })}\n`;
const INITIALIZE = {
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '0' } },
};
const HANDSHAKE =
  line({ id: 1, ...INITIALIZE }) +
  line({ method: 'notifications/initialized' }) +
  line({ id: 2, method: 'tools/list' });

type Way = 'SIGINT' | 'SIGTERM' | 'EOF';

interface Relay {
  child: ChildProcess;
  /** Resolves with the answer to `id`. */
  answer(id: number): Promise<{ result?: unknown; error?: { message: string } }>;
  /** Stop it that way; resolves with its exit code once it is gone (SIGKILL past the bound). */
  stop(way: Way): Promise<number | null>;
  output(): string;
}

/** `warren mcp` as a client launches it, the handshake written at once. Reaped whatever happens. */
function startRelay(url: string, key: string, input = HANDSHAKE): Relay {
  const child = spawn(process.execPath, [WARREN_BIN, 'mcp', '--url', url], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, ...binEnv(), WARREN_API_KEY: key },
  });
  reapOnExit(child);
  let stdout = '';
  let stderr = '';
  const waiters = new Set<() => void>();
  child.stdout!.setEncoding('utf8').on('data', (c: string) => {
    stdout += c;
    for (const w of waiters) w();
  });
  child.stderr!.setEncoding('utf8').on('data', (c: string) => {
    stderr += c;
  });
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  child.stdin!.write(input);
  const answers = () =>
    stdout
      .split('\n')
      // Complete lines only: a long answer arrives in several chunks.
      .slice(0, -1)
      .filter((l) => l.trim())
      .map((l) => JSON.parse(l) as { id?: number; result?: unknown; error?: { message: string } });
  return {
    child,
    output: () => `stdout:\n${stdout}\nstderr:\n${stderr}`,
    answer: (id) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => {
          waiters.delete(check);
          reject(new Error(`no answer to ${id} in ${START_MS} ms:\n${stdout}\n${stderr}`));
        }, START_MS);
        const check = () => {
          const a = answers().find((m) => m.id === id);
          if (!a) return;
          clearTimeout(timer);
          waiters.delete(check);
          resolve(a);
        };
        waiters.add(check);
        check();
      }),
    async stop(way) {
      if (child.exitCode === null && child.signalCode === null) {
        if (way === 'EOF') child.stdin!.end();
        else child.kill(way);
      }
      const late = setTimeout(() => child.kill('SIGKILL'), WAIT_MS);
      try {
        return await exited;
      } finally {
        clearTimeout(late);
      }
    },
  };
}

/** A bare initialize that is never followed by DELETE: its session is simply left. */
async function abandon(h: HttpWarren): Promise<number> {
  const res = await fetch(`${h.url}/mcp`, {
    method: 'POST',
    headers: {
      authorization: `Bearer ${h.key}`,
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
    },
    body: JSON.stringify({ jsonrpc: '2.0', id: 1, ...INITIALIZE }),
    signal: AbortSignal.timeout(10_000),
  });
  await res.text();
  return res.status;
}

const live = (h: HttpWarren) => liveMcpSessions(h.url, h.key);

/** A client whose session outlived `idleFor` (its stream open by then), after at most 5 tries. */
async function steadyClient(h: HttpWarren, idleFor: number): Promise<Awaited<ReturnType<typeof mcpClient>>> {
  for (let attempt = 1; ; attempt++) {
    const client = await mcpClient(h.url, h.key);
    await sleep(idleFor);
    try {
      await client.listTools();
      return client;
    } catch (error) {
      await client.close().catch(() => {});
      if (attempt === 5 || !/Session not found/.test(String(error))) throw error;
    }
  }
}

forEachWarren(
  'MCP sessions are reclaimed',
  (t) => {
    it('relays stopped by SIGINT, SIGTERM or end of input end their sessions: batches of a full cap never see a 429', async () => {
      const CAP = 4;
      // Expiry far off (the old 10 minutes): only the relays' own DELETEs can free the slots.
      const h = await startHttp(t, { http: { mcp: { maxSessionsPerCaller: CAP, idleMs: 600_000 } } });
      const relays: Relay[] = [];
      try {
        for (const way of ['SIGINT', 'SIGTERM', 'EOF'] as const) {
          const batch = Array.from({ length: CAP }, () => startRelay(h.url, h.key));
          relays.push(...batch);
          for (const r of batch) {
            const tools = await r.answer(2);
            assert.equal(tools.error, undefined, `${way}: ${JSON.stringify(tools)}\n${r.output()}`);
          }
          assert.equal(await live(h), CAP, 'the batch holds the whole cap');
          const codes = await Promise.all(batch.map((r) => r.stop(way)));
          await until(async () => (await live(h)) === 0, WAIT_MS, `the ${way} batch's sessions to end`);
          assert.deepEqual(codes, Array(CAP).fill(0), `${way}: each relay exits cleanly`);
        }
        assert.equal(await mcp429s(h.url, h.key), 0);
      } finally {
        await Promise.allSettled(relays.map((r) => r.stop('SIGTERM')));
      }
    });

    it('a relay told to stop while warren does not answer still exits (its DELETE is bounded)', async () => {
      // Accepts connections and never answers: a hung or half-gone server.
      const held = new Set<Socket>();
      const mute = createServer((s) => held.add(s));
      await new Promise<void>((r) => mute.listen(0, '127.0.0.1', r));
      const { port } = mute.address() as { port: number };
      const relay = startRelay(`http://127.0.0.1:${port}`, 'k', line({ id: 1, ...INITIALIZE }));
      try {
        await until(() => held.size > 0, WAIT_MS, 'the relay to connect');
        relay.child.kill('SIGTERM');
        // stop() SIGKILLs only past WAIT_MS; a relay that waited for ever would show up as null.
        assert.equal(await relay.stop('SIGTERM'), 0, relay.output());
      } finally {
        await relay.stop('SIGTERM');
        for (const s of held) s.destroy();
        await new Promise<void>((r) => mute.close(() => r()));
      }
    });

    it('HTTP clients that never DELETE are reclaimed by expiry; a client with its stream open is not idle', async () => {
      const CAP = 8;
      const IDLE_MS = 300;
      const h = await startHttp(t, { http: { mcp: { maxSessionsPerCaller: CAP, idleMs: IDLE_MS } } });
      // A client that holds its GET stream open: it takes one slot and keeps it. Its stream
      // opens just after `initialize`; on a loaded machine that can be later than the 300 ms
      // expiry, so the set-up waits several expiries and starts again if the session went.
      const steady = await steadyClient(h, 3 * IDLE_MS);
      try {
        // A call that ends while the stream stays open: the stream alone keeps the session busy.
        await steady.listTools();
        let abandoned = 0;
        // 88 abandoned here, 12 by the relays above: 100.
        while (abandoned < 88) {
          // The caller gets a new session once the abandoned ones idle out.
          await until(async () => (await abandon(h)) === 200, WAIT_MS, 'a slot to free');
          abandoned++;
          while (abandoned < 88) {
            const status = await abandon(h);
            if (status === 429) break;
            assert.equal(status, 200);
            abandoned++;
          }
          assert.ok((await live(h)) <= CAP);
        }
        await until(async () => (await live(h)) === 1, WAIT_MS, 'all but the steady session to expire');
        // Idle for many expiries, yet its stream is open: still its session.
        const r = await steady.callTool({ name: 'ps', arguments: {} });
        assert.notEqual(r.isError, true, JSON.stringify(r));
      } finally {
        await steady.close();
      }
      await until(async () => (await live(h)) === 0, WAIT_MS, 'the steady session to expire once closed');
    });
  },
  ['sqlite'],
);
