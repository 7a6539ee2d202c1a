/**
 * A real Claude Code as the external coordinator: the `claude` CLI (node_modules/.bin/claude)
 * against the scripted model API on loopback, with `warren mcp-serve coordinator` as its
 * stdio MCP server, drives a claude-code worker that warren runs: start_session →
 * send_prompt → await_turn → read_artifact. The worker talks to the same mock model.
 */
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdirSync, mkdtempSync, realpathSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import {
  firstUserText,
  lastToolResult,
  type MockAnthropic,
  type Script,
  startMockAnthropic,
} from '../helpers/mock-anthropic.ts';
import { binEnv, startServer, WARREN_BIN } from '../helpers/server.ts';

const CLAUDE = fileURLToPath(new URL('../../node_modules/.bin/claude', import.meta.url));
const root = realpathSync(mkdtempSync(join(tmpdir(), 'warren-claude-coord-')));
const closers: Array<() => Promise<void>> = [];
after(async () => {
  await Promise.allSettled(closers.splice(0).map((c) => c()));
  rmSync(root, { recursive: true, force: true });
});

const C = (n: string) => `mcp__coord__skc_coordinator_${n}`;
const ARTIFACT = '# result\nthe worker wrote this\n';

it('Claude Code coordinates a claude-code worker over the bridge', { timeout: 150_000 }, async () => {
  const work = join(root, 'work');
  const home = join(root, 'home');
  mkdirSync(work);
  mkdirSync(join(home, '.claude'), { recursive: true });
  const json = (r: { text: string } | undefined) => JSON.parse(r?.text ?? '{}');
  // One mock for both agents, told apart by their prompt.
  const script: Script = (req) => {
    const coordinator = firstUserText(req).includes('COORDINATE:');
    const last = lastToolResult(req);
    if (process.env.TURNS_DEBUG) console.error('REQ', coordinator, last?.name, last?.text.slice(0, 300));
    if (!coordinator) {
      // The worker: write the artifact with Claude Code's own Write tool, then say so.
      if (!last)
        return {
          toolUses: [{ name: 'Write', input: { file_path: join(work, 'result.md'), content: ARTIFACT } }],
        };
      return { text: 'WORKER: wrote result.md' };
    }
    // The adapter is a child process the CLI connects to in the background: wait for it.
    if (last?.text.includes('still connecting'))
      return { toolUses: [{ name: 'WaitForMcpServers', input: {} }] };
    if (!last || last.name === 'WaitForMcpServers') {
      return {
        toolUses: [
          {
            name: C('start_session'),
            input: {
              kind: 'claude-code',
              cwd: work,
              config: { allowedTools: ['Write'], permissionMode: 'acceptEdits' },
              allow_mutation: true,
            },
          },
        ],
      };
    }
    const out = json(last);
    if (last.name === C('start_session')) {
      return {
        toolUses: [
          {
            name: C('send_prompt'),
            input: { session_id: out.session.session_id, prompt: 'write result.md', allow_mutation: true },
          },
        ],
      };
    }
    if (last.name === C('send_prompt') || (last.name === C('await_turn') && out.timed_out)) {
      const turn = out.turn;
      return { toolUses: [{ name: C('await_turn'), input: { turn_id: turn.turn_id, timeout_ms: 30_000 } }] };
    }
    if (last.name === C('await_turn')) {
      return {
        toolUses: [
          { name: C('read_artifact'), input: { session_id: out.turn.session_id, path: 'result.md' } },
        ],
      };
    }
    return { text: `COORDINATOR DONE: ${JSON.stringify(out)}` };
  };
  const model: MockAnthropic = await startMockAnthropic(script);
  closers.push(() => model.close());
  const dirs = { HOME: home, CLAUDE_CONFIG_DIR: join(home, '.claude') };
  const settings = JSON.stringify({
    turns: { mutations: ['sessions', 'questions', 'reports'], workdirRoots: [root] },
  });
  const server = await startServer({
    dataDir: join(root, 'data'),
    args: ['--plugin-settings', settings],
    env: { ...model.env(), ...dirs },
  });
  closers.push(() => server.stop());
  const mcpConfig = {
    mcpServers: {
      coord: {
        command: process.execPath,
        args: [WARREN_BIN, 'mcp-serve', 'coordinator', '--url', server.url, '--key', server.key],
        env: {
          ...(binEnv() as Record<string, string>),
          SKC_COORDINATOR_MCP_WORKDIR_ROOTS: root,
          SKC_COORDINATOR_MCP_MUTATIONS: 'sessions',
        },
      },
    },
  };
  const allowed = ['start_session', 'send_prompt', 'await_turn', 'read_artifact'].map(C).join(',');
  const result = await new Promise<{ code: number; stdout: string; stderr: string }>((resolve, reject) => {
    execFile(
      CLAUDE,
      [
        '-p',
        'COORDINATE: have a worker write result.md',
        '--output-format',
        'json',
        '--mcp-config',
        JSON.stringify(mcpConfig),
        '--strict-mcp-config',
        '--allowedTools',
        allowed,
      ],
      {
        cwd: root,
        timeout: 120_000,
        env: {
          PATH: process.env.PATH ?? '',
          ...model.env(),
          ...dirs,
          DISABLE_AUTOUPDATER: '1',
          CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC: '1',
          DISABLE_TELEMETRY: '1',
          DISABLE_ERROR_REPORTING: '1',
        },
      },
      (error, stdout, stderr) => {
        if (error && typeof error.code !== 'number') return reject(error);
        resolve({ code: typeof error?.code === 'number' ? error.code : 0, stdout, stderr });
      },
    );
  });
  assert.equal(result.code, 0, result.stderr + result.stdout);
  const final = JSON.parse(result.stdout) as { result: string };
  assert.match(final.result, /^COORDINATOR DONE: /);
  const artifact = JSON.parse(final.result.slice('COORDINATOR DONE: '.length));
  assert.deepEqual([artifact.path, artifact.content, artifact.binary], ['result.md', ARTIFACT, false]);
  // The turn came from the worker runtime's end of turn, with its last word.
  const turns = await server.api<{ events: Array<{ payload: { source?: string } }> }>(
    'GET',
    '/v1/events?type=turn.completed',
  );
  assert.equal(turns.json.events[0]?.payload.source, 'runtime_end_of_turn');
});
