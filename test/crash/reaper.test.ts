import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { until } from '../helpers/warrens.ts';

const HOLDER = fileURLToPath(new URL('../fixtures/server-holder.ts', import.meta.url));

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

for (const signal of ['SIGTERM', 'SIGINT'] as const) {
  it(`a test file ended by ${signal} takes the servers it started with it`, {
    timeout: 90_000,
  }, async (t) => {
    const holder = spawn(process.execPath, ['--import', 'tsx', HOLDER], {
      stdio: ['ignore', 'pipe', 'inherit'],
    });
    let server = 0;
    let dataDir = '';
    t.after(() => {
      holder.kill('SIGKILL');
      if (server && alive(server)) process.kill(server, 'SIGKILL');
      if (dataDir) rmSync(dataDir, { recursive: true, force: true });
    });
    let out = '';
    holder.stdout!.setEncoding('utf8').on('data', (c: string) => {
      out += c;
    });
    const started = await until(() => /server (\d+) (\S+)/.exec(out), 60_000, 'the server to start');
    server = Number(started[1]);
    dataDir = started[2]!;
    assert.ok(alive(server));
    holder.kill(signal);
    await until(() => !alive(server), 15_000, 'the server to go');
  });
}
