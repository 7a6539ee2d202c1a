import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { reapOnExit } from '../helpers/reaper.ts';
import { binEnv, type ServerProcess, startServer, WARREN_BIN } from '../helpers/server.ts';

/**
 * Issue 25's attack: two servers on one data dir both started, the second ended the first's
 * agents and resumed its sessions again. Now the second refuses, naming the first, and the
 * first keeps running untouched; a SIGKILLed server's lock does not block the next start.
 */

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

async function until(what: string, ok: () => boolean | Promise<boolean>, ms = 20_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** `warren serve` on `dataDir`, to its exit (bounded): its code and everything it printed. */
function serveOnce(dataDir: string): Promise<{ code: number | null; out: string }> {
  const child = spawn(process.execPath, [WARREN_BIN, 'serve', '--port', '0', '--data-dir', dataDir], {
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, ...binEnv() },
  });
  reapOnExit(child);
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => {
    out += c;
  });
  child.stderr.setEncoding('utf8').on('data', (c: string) => {
    out += c;
  });
  return new Promise((resolve) => {
    const t = setTimeout(() => child.kill('SIGKILL'), 60_000);
    child.once('exit', (code) => {
      clearTimeout(t);
      resolve({ code, out });
    });
  });
}

describe('one server per data dir', () => {
  const dirs: string[] = [];
  const servers: ServerProcess[] = [];
  after(async () => {
    await Promise.allSettled(servers.map((s) => s.crash()));
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  it('a second serve refuses naming the first, which keeps its agent; a SIGKILLed lock does not block', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'warren-one-'));
    dirs.push(dataDir);
    const pidFile = join(dataDir, 'agent.pid');
    const s1 = await startServer({ dataDir });
    servers.push(s1);
    const spawned = await s1.api<{ session: { id: string } }>('POST', '/v1/sessions', {
      runtime: 'command',
      title: 'long',
      command: ['/bin/sh', '-c', `echo $$ > ${pidFile}; echo '{"warren":"idle"}'; exec sleep 300`],
    });
    assert.equal(spawned.status, 200, JSON.stringify(spawned.json));
    const id = spawned.json.session.id;
    await until(
      'the agent to write its pid',
      () => existsSync(pidFile) && readFileSync(pidFile, 'utf8').endsWith('\n'),
    );
    const agentPid = Number(readFileSync(pidFile, 'utf8'));
    const eventsBefore = (await s1.api<{ events: unknown[] }>('GET', `/v1/sessions/${id}/events`)).json.events
      .length;

    const second = await serveOnce(dataDir);
    assert.notEqual(second.code, 0, second.out);
    assert.match(second.out, /another warren server is running on data dir/);
    assert.ok(second.out.includes(`pid ${s1.child.pid}`), second.out);
    assert.ok(second.out.includes(s1.url), second.out);
    assert.doesNotMatch(second.out, /warren listening/);

    // The first is untouched: healthy, its agent the same process, nothing new in its session's log.
    assert.equal((await fetch(`${s1.url}/healthz`)).status, 200);
    assert.ok(alive(agentPid), 'the first server’s agent still runs');
    const show = await s1.api<{ session: { status: string } }>('GET', `/v1/sessions/${id}`);
    assert.ok(['running', 'idle'].includes(show.json.session.status), JSON.stringify(show.json));
    const eventsAfter = (await s1.api<{ events: unknown[] }>('GET', `/v1/sessions/${id}/events`)).json.events
      .length;
    assert.equal(eventsAfter, eventsBefore, 'the refused server wrote nothing for the session');

    // A SIGKILLed server leaves its lock behind in no form that blocks the next start.
    await s1.crash();
    await until('the dead server’s agent to follow it', () => !alive(agentPid));
    const s3 = await startServer({ dataDir });
    servers.push(s3);
    assert.equal((await fetch(`${s3.url}/healthz`)).status, 200);
    const holder = JSON.parse(readFileSync(join(dataDir, 'serve.json'), 'utf8')) as {
      pid: number;
      url: string;
    };
    assert.equal(holder.pid, s3.child.pid);
    assert.equal(holder.url, s3.url);
    await s3.stop();
    assert.ok(!existsSync(join(dataDir, 'serve.json')), 'a graceful stop removes the holder file');
  });
});
