/**
 * Real `claude -p` runs in a row, each with `warren mcp` as its stdio MCP server, against one
 * `warren serve` and one operator key (issue 24): twice as many runs as the caller's cap
 * never see a 429, and the live count returns to zero. The expiry is set far off, so only the
 * relay ending its session when Claude Code stops it (SIGINT, then SIGTERM) frees the slots.
 * The 40-run version (default settings) is the `mcpSessions` bench.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import type { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { liveMcpSessions, mcp429s, runClaude, startScriptedModel } from '../helpers/claude-mcp-runs.ts';
import { mcpClient } from '../helpers/mcp.ts';
import { startServer } from '../helpers/server.ts';
import { until, WAIT_MS } from '../helpers/warrens.ts';

const CAP = 3;
const RUNS = 2 * CAP;

const root = realpathSync(mkdtempSync(join(tmpdir(), 'warren-claude-sessions-')));
const closers: Array<() => Promise<void>> = [];
after(async () => {
  await Promise.allSettled(closers.splice(0).map((c) => c()));
  rmSync(root, { recursive: true, force: true });
});

it(`${RUNS} claude -p runs in a row, cap ${CAP}: no 429, no session left`, {
  timeout: 600_000,
}, async (t) => {
  const model = await startScriptedModel();
  closers.push(() => model.close());
  const server = await startServer({
    dataDir: join(root, 'data'),
    // Expiry far off (the old 10 minutes): only the relays' own DELETEs can free the slots.
    args: ['--mcp-max-sessions-per-caller', String(CAP), '--mcp-idle-ms', '600000'],
  });
  closers.push(() => server.stop());
  const { url, key } = server;
  for (let i = 0; i < RUNS; i++) {
    const run = await runClaude({ model, url, key, home: join(root, 'home') });
    t.diagnostic(`run ${i + 1}: ${run.ms.toFixed(0)} ms, ${run.result}`);
    assert.equal(run.code, 0, run.stderr);
    assert.equal(run.result, 'PS OK', `run ${i + 1}`);
  }
  assert.equal(await mcp429s(url, key), 0);
  await until(async () => (await liveMcpSessions(url, key)) === 0, WAIT_MS, 'no live MCP session');
  // The cap the runs lived under was the configured one (--mcp-max-sessions-per-caller).
  const held: Client[] = [];
  try {
    for (let i = 0; i < CAP; i++) held.push(await mcpClient(url, key));
    await assert.rejects(
      mcpClient(url, key),
      new RegExp(`too many open MCP sessions for this caller \\(cap ${CAP}\\)`),
    );
  } finally {
    await Promise.allSettled(held.map((c) => c.close()));
  }
});
