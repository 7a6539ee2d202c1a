/**
 * A node's agents keep their private files (a claude-code agent's mcp.json, holding its
 * token) under one run root in the temp dir, `warren-run-<prefix>`. Each agent removes its own
 * dir when it ends; a clean shutdown removes the root as well, so runs leave nothing behind.
 */
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, realpathSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, it } from 'node:test';
import { deriveNodeId } from '../../src/cluster/node-id.ts';
import { markPrefix } from '../../src/kernel/supervisor.ts';
import { runDir } from '../../src/runtimes/rundir.ts';
import { type ServerProcess, startServer } from '../helpers/server.ts';
import { until } from '../helpers/warrens.ts';

const root = realpathSync(mkdtempSync(join(tmpdir(), 'warren-run-dir-')));
let server: ServerProcess | undefined;
after(async () => {
  await server?.crash();
  rmSync(root, { recursive: true, force: true });
});

/** A loopback port nothing listens on: the agent's model API is never reached. */
const closedPort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });

it('a clean shutdown leaves no warren-run-* dir behind', { timeout: 120_000 }, async () => {
  const dataDir = join(root, 'data');
  const home = join(root, 'home');
  mkdirSync(home);
  server = await startServer({ dataDir });
  const dir = runDir(markPrefix(deriveNodeId(dataDir, null)));
  const spawned = await server.api<{ session: { id: string } }>('POST', '/v1/sessions', {
    runtime: 'claude-code',
    title: 'holds a private dir',
    prompt: 'hello',
    cwd: root,
    env: {
      ANTHROPIC_BASE_URL: `http://127.0.0.1:${await closedPort()}`,
      ANTHROPIC_API_KEY: 'test',
      HOME: home,
      CLAUDE_CONFIG_DIR: join(home, '.claude'),
    },
  });
  assert.equal(spawned.status, 200, JSON.stringify(spawned.json));
  // The agent's private dir is in the run root while it runs.
  await until(() => existsSync(dir) && readdirSync(dir).some((f) => f.startsWith('claude-')), 30_000, dir);
  await server.stop();
  assert.equal(server.child.exitCode, 0, server.output());
  assert.ok(!existsSync(dir), `${dir} is left behind: ${existsSync(dir) ? readdirSync(dir).join(', ') : ''}`);
});
