/**
 * MCP sessions under real Claude Code (issue 24): 40 `claude -p` runs in a row, each with
 * `warren mcp` as its stdio MCP server, against one `warren serve` with the default settings
 * (32 sessions per caller, a minute's expiry) and one operator key; the model is the scripted
 * mock. Before issue 24 the 33rd run within ten minutes got a 429. Printed: the runs and how
 * long they took, the 429s (goal 0), the most sessions live after a run ended and the live
 * count at the end (goal 0 within seconds, well inside the expiry).
 *
 *   npx tsx bench/run.ts mcpSessions      (or: npx tsx bench/mcp-sessions.ts)
 */
import { join } from 'node:path';
import { liveMcpSessions, mcp429s, runClaude, startScriptedModel } from '../test/helpers/claude-mcp-runs.ts';
import { startServer } from '../test/helpers/server.ts';
import { tempDir } from './lib/tempdir.ts';
import type { BenchRow } from './store.ts';

const RUNS = 40;
/** How long the live count may take to reach zero after the last run: far below the expiry. */
const SETTLE_MS = 10_000;

async function claudeMcpSessions(): Promise<BenchRow[]> {
  using tmp = tempDir('warren-bench-mcp-sessions-');
  const model = await startScriptedModel();
  const server = await startServer({ dataDir: join(tmp.dir, 'data') }).catch(async (error) => {
    await model.close();
    throw error;
  });
  try {
    const { url, key } = server;
    const t0 = performance.now();
    const times: number[] = [];
    let ok = 0;
    let mostLive = 0;
    for (let i = 0; i < RUNS; i++) {
      const run = await runClaude({ model, url, key, home: join(tmp.dir, 'home') });
      times.push(run.ms);
      if (run.code === 0 && run.result === 'PS OK') ok++;
      else process.stderr.write(`run ${i + 1}: exit ${run.code}, ${run.result.slice(0, 300)}\n`);
      mostLive = Math.max(mostLive, await liveMcpSessions(url, key));
    }
    const seconds = (performance.now() - t0) / 1000;
    const refused = await mcp429s(url, key);
    const settleEnd = performance.now() + SETTLE_MS;
    let live = await liveMcpSessions(url, key);
    while (live > 0 && performance.now() < settleEnd) {
      await new Promise((r) => setTimeout(r, 100));
      live = await liveMcpSessions(url, key);
    }
    const sorted = [...times].sort((a, b) => a - b);
    const median = sorted[Math.floor(sorted.length / 2)]! / 1000;
    return [
      {
        name: `claude -p runs with warren mcp (${RUNS} in a row)`,
        value: ok,
        unit: 'ok',
        goal: RUNS,
        note: `${seconds.toFixed(0)} s in all, median ${median.toFixed(1)} s a run; default cap 32, expiry 60 s`,
      },
      { name: 'MCP 429s over those runs', value: refused, unit: '', max: 0 },
      {
        name: 'MCP sessions live after a run (most)',
        value: mostLive,
        unit: '',
        max: 0,
        note: 'sampled as each claude -p exits',
      },
      {
        name: 'MCP sessions live at the end',
        value: live,
        unit: '',
        max: 0,
        note: `after at most ${SETTLE_MS / 1000} s (expiry would take 60)`,
      },
    ];
  } finally {
    await server.stop();
    await model.close();
  }
}

export const mcpSessionBenches = { claudeMcpSessions };

if (import.meta.url === `file://${process.argv[1]}`) {
  for (const r of await claudeMcpSessions()) console.log(`${r.name.padEnd(48)} ${r.value} ${r.note ?? ''}`);
}
