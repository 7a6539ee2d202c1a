/**
 * `claude -p` runs, one after another, each with warren as a stdio MCP server (`warren mcp`,
 * the relay) against one running warren and one operator key: the way a user scripts Claude
 * Code. The model is the scripted mock (test/helpers/mock-anthropic.ts): each run waits for
 * warren's tools if they are still connecting, calls `ps`, and ends its turn with what it
 * got. Shared by test/mcp/claude-sessions.test.ts and the `mcpSessions` bench.
 */
import { execFile } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import {
  allToolResults,
  lastToolResult,
  type MockAnthropic,
  startMockAnthropic,
  toolNames,
} from './mock-anthropic.ts';
import { binEnv, WARREN_BIN } from './server.ts';

const CLAUDE = fileURLToPath(new URL('../../node_modules/.bin/claude', import.meta.url));
const TOOL = 'mcp__warren__ps';
/** WaitForMcpServers calls before a run gives up on warren's tools. */
const MAX_WAITS = 20;

export interface ClaudeRun {
  code: number;
  /** The run's final answer: `PS OK` when warren's `ps` answered, else what went wrong. */
  result: string;
  ms: number;
  stderr: string;
}

/** The mock model every run talks to: one per series of runs. */
export function startScriptedModel(): Promise<MockAnthropic> {
  return startMockAnthropic((req) => {
    const last = lastToolResult(req);
    if (last?.name === TOOL) return { text: last.isError ? `PS FAILED: ${last.text}` : 'PS OK' };
    if (toolNames(req).includes(TOOL)) return { toolUses: [{ name: TOOL, input: {} }] };
    // Claude Code connects MCP servers in the background: wait for them (a bounded number of times).
    const waits = allToolResults(req).filter((r) => r.name === 'WaitForMcpServers').length;
    if (waits < MAX_WAITS) return { toolUses: [{ name: 'WaitForMcpServers', input: {} }] };
    return { text: `NO WARREN TOOLS: ${last?.text.slice(0, 300)}` };
  });
}

/** One `claude -p` run with `warren mcp` as its stdio server; bounded by `timeoutMs`. */
export function runClaude(opts: {
  model: MockAnthropic;
  /** The warren's URL and the operator key every run uses. */
  url: string;
  key: string;
  /** A scratch dir for the runs' HOME. */
  home: string;
  timeoutMs?: number;
}): Promise<ClaudeRun> {
  const dirs = { HOME: opts.home, CLAUDE_CONFIG_DIR: join(opts.home, '.claude') };
  mkdirSync(dirs.CLAUDE_CONFIG_DIR, { recursive: true });
  const mcpConfig = {
    mcpServers: {
      warren: {
        command: process.execPath,
        args: [WARREN_BIN, 'mcp', '--url', opts.url],
        env: { ...(binEnv() as Record<string, string>), WARREN_API_KEY: opts.key },
      },
    },
  };
  const t0 = performance.now();
  return new Promise((resolve, reject) => {
    const child = execFile(
      CLAUDE,
      [
        '-p',
        'list the sessions',
        '--output-format',
        'json',
        '--mcp-config',
        JSON.stringify(mcpConfig),
        '--strict-mcp-config',
        '--allowedTools',
        TOOL,
      ],
      {
        cwd: opts.home,
        timeout: opts.timeoutMs ?? 120_000,
        killSignal: 'SIGKILL',
        env: {
          PATH: process.env.PATH ?? '',
          ...opts.model.env(),
          ...dirs,
          DISABLE_AUTOUPDATER: '1',
          CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
          DISABLE_TELEMETRY: '1',
          DISABLE_ERROR_REPORTING: '1',
        },
      },
      (error, stdout, stderr) => {
        if (error && typeof error.code !== 'number') return reject(error);
        let result = stdout;
        try {
          result = (JSON.parse(stdout) as { result: string }).result;
        } catch {}
        resolve({
          code: typeof error?.code === 'number' ? error.code : 0,
          result,
          ms: performance.now() - t0,
          stderr,
        });
      },
    );
    // Input at its end at once: with an open stdin, `claude -p` waits 3 s for more prompt.
    child.stdin?.end();
  });
}

/** A Prometheus sample from the warren's `/metrics` (0 when absent). */
export async function metric(url: string, key: string, line: RegExp): Promise<number> {
  const res = await fetch(`${url}/metrics`, {
    headers: { authorization: `Bearer ${key}` },
    signal: AbortSignal.timeout(10_000),
  });
  const text = await res.text();
  let sum = 0;
  for (const l of text.split('\n')) {
    if (!line.test(l)) continue;
    sum += Number(l.slice(l.lastIndexOf(' ') + 1));
  }
  return sum;
}

/** Live MCP sessions over Streamable HTTP. */
export const liveMcpSessions = (url: string, key: string) => metric(url, key, /^warren_mcp_sessions /);

/** `initialize`s refused for the cap so far. */
export const mcp429s = (url: string, key: string) =>
  metric(url, key, /^warren_http_requests_total\{.*route="\/mcp".*status="429"/);
