/**
 * `warren mcp` as a client launches it: a child process, requests written the moment it
 * starts (before it can have connected), stdin closed right after. Every request must get
 * its real answer; none may be dropped or answered "aborted".
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import { binEnv, type ServerProcess, startServer, WARREN_BIN } from '../helpers/server.ts';
import { tempDir } from './helpers.ts';

interface Answer {
  id?: number;
  result?: { protocolVersion?: string; tools?: { name: string }[] };
  error?: { message: string };
}

const message = (m: Record<string, unknown>) => `${JSON.stringify({ jsonrpc: '2.0', ...m })}\n`;
const INITIALIZE = message({
  id: 1,
  method: 'initialize',
  params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'test', version: '0' } },
});
const INITIALIZED = message({ method: 'notifications/initialized' });
const TOOLS = message({ id: 2, method: 'tools/list' });

/** Spawns `warren mcp`, writes `input` at once, then ends stdin; bounded, always reaped. */
function runShim(url: string, key: string, input: string) {
  const t0 = performance.now();
  const child = spawn(process.execPath, [WARREN_BIN, 'mcp', '--url', url], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env: { ...process.env, ...binEnv(), WARREN_API_KEY: key },
  });
  let stdout = '';
  let stderr = '';
  let firstAnswerMs: number | undefined;
  child.stdout.setEncoding('utf8').on('data', (c: string) => {
    firstAnswerMs ??= performance.now() - t0;
    stdout += c;
  });
  child.stderr.setEncoding('utf8').on('data', (c: string) => {
    stderr += c;
  });
  child.stdin.end(input);
  return new Promise<{ code: number | null; answers: Answer[]; stderr: string; firstAnswerMs?: number }>(
    (resolve, reject) => {
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error(`warren mcp did not exit in 30 s; stdout:\n${stdout}\nstderr:\n${stderr}`));
      }, 30_000);
      child.once('exit', (code) => {
        clearTimeout(timer);
        const answers = stdout
          .split('\n')
          .filter((l) => l.trim())
          .map((l) => JSON.parse(l) as Answer);
        resolve({ code, answers, stderr, ...(firstAnswerMs !== undefined ? { firstAnswerMs } : {}) });
      });
    },
  );
}

describe('warren mcp (stdio shim)', () => {
  let server: ServerProcess;
  before(async () => {
    server = await startServer({ dataDir: tempDir() });
  });
  after(() => server?.stop());

  it('answers initialize written before it connected, and the requests queued behind it', async (t) => {
    const run = await runShim(server.url, server.key, INITIALIZE + INITIALIZED + TOOLS);
    t.diagnostic(`time to first answer: ${run.firstAnswerMs?.toFixed(0)} ms`);
    assert.equal(run.code, 0, run.stderr);
    const byId = new Map(run.answers.map((a) => [a.id, a]));
    assert.equal(byId.get(1)?.error, undefined, JSON.stringify(byId.get(1)));
    assert.equal(byId.get(1)?.result?.protocolVersion, '2025-06-18');
    assert.equal(byId.get(2)?.error, undefined, JSON.stringify(byId.get(2)));
    assert.ok(byId.get(2)?.result?.tools?.some((tool) => tool.name === 'ipc_write'));
    assert.doesNotMatch(run.stderr, /abort/i);
  });

  it('answers with an error, not silence, when no warren is there', async () => {
    const run = await runShim('http://127.0.0.1:9', 'k', INITIALIZE);
    assert.equal(run.code, 0);
    assert.equal(run.answers.length, 1);
    assert.equal(run.answers[0]?.id, 1);
    assert.match(run.answers[0]?.error?.message ?? '', /warren at http:\/\/127\.0\.0\.1:9/);
    assert.doesNotMatch(run.answers[0]?.error?.message ?? '', /abort/i);
  });
});
