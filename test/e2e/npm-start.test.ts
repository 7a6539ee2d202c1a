/**
 * `npm start` run in the background and stopped by npm's pid (`kill <npm's pid>`): npm forwards
 * the SIGTERM to the script's process, so that process must be warren itself, not a shell
 * that dies of the signal and leaves warren running (package.json's scripts `exec` node).
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { gone } from '../helpers/processes.ts';
import { reapOnExit } from '../helpers/reaper.ts';
import { binEnv } from '../helpers/server.ts';
import { until } from '../helpers/warrens.ts';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));

/** Every process below `pid`, from /proc (a shell in between included). */
function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    let stat: string;
    try {
      stat = readFileSync(`/proc/${name}/stat`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
    children.set(ppid, [...(children.get(ppid) ?? []), Number(name)]);
  }
  const out: number[] = [];
  const walk = (p: number) => {
    for (const c of children.get(p) ?? []) {
      out.push(c);
      walk(c);
    }
  };
  walk(pid);
  return out;
}

// The server must not pick up a developer's own settings (a WARREN_PORT of :7700 …).
const cleanEnv = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('WARREN_')));

const answers = (url: string) =>
  fetch(`${url}/healthz`, { signal: AbortSignal.timeout(2000) }).then(
    () => true,
    () => false,
  );

it('SIGTERM to a backgrounded `npm start` stops the server it started', { timeout: 120_000 }, async () => {
  const dataDir = mkdtempSync(join(tmpdir(), 'warren-npm-start-'));
  // A port of its own (0: any free one) and a data dir of its own, never :7700.
  const npm = spawn('npm', ['start', '--', '--port', '0', '--data-dir', dataDir], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...cleanEnv, ...binEnv(), WARREN_CONTAINMENT: 'none' },
  });
  reapOnExit(npm);
  let out = '';
  npm.stdout!.setEncoding('utf8').on('data', (c: string) => {
    out += c;
  });
  npm.stderr!.setEncoding('utf8').on('data', (c: string) => {
    out += c;
  });
  let tree: number[] = [];
  try {
    const url = await until(() => /warren listening on (http:\/\/\S+)/.exec(out)?.[1], 60_000, 'the server');
    assert.ok(await answers(url), 'the server answers');
    tree = descendants(npm.pid!);
    assert.ok(tree.length > 0, 'npm started the server as its descendant');
    const npmExited = new Promise<void>((r) => npm.once('exit', () => r()));
    process.kill(npm.pid!, 'SIGTERM');
    await until(async () => !(await answers(url)), 20_000, 'the port to stop answering');
    await until(() => tree.every(gone), 20_000, `no process npm started to remain (${tree.join(', ')})`);
    await npmExited;
  } finally {
    for (const pid of [npm.pid!, ...tree]) {
      if (!gone(pid)) process.kill(pid, 'SIGKILL');
    }
    rmSync(dataDir, { recursive: true, force: true });
  }
});
