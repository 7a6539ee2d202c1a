/**
 * Environments: unknown and offline ones are typed errors, a runner offers only its runtimes,
 * tasks wait for their environment, and a dropped runner's sessions fail over to another
 * runner of the same name. A real server and real runner processes, loopback only.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, it } from 'node:test';
import { type ServerProcess, startServer } from '../helpers/server.ts';
import { type RunnerProcess, spawnOn, startRunner, statusOf, until } from './helpers.ts';

const WAITS = { runtime: 'script', script: { steps: [{ say: 'up' }, { wait: {} }, { wait: {} }] } };

let server: ServerProcess;
const runners: RunnerProcess[] = [];
const dataDir = mkdtempSync(join(tmpdir(), 'warren-envs-'));
const tokens: Record<string, string> = {};

before(async () => {
  server = await startServer({ dataDir, args: ['--reconcile-interval-ms', '300'] });
  for (const name of ['r1', 'r2', 'pool']) {
    const r = await server.api<{ token: string }>('POST', '/v1/runners', { name });
    assert.equal(r.status, 200);
    tokens[name] = r.json.token;
  }
  runners.push(await startRunner({ url: server.url, token: tokens.r1!, name: 'r1', runtimes: 'script' }));
});

after(async () => {
  await Promise.all(runners.map((r) => r.crash()));
  await server?.crash();
  rmSync(dataDir, { recursive: true, force: true });
});

it('unknown and offline environments are typed errors; a runner runs only what it offers', async () => {
  for (const env of ['runner:nope', 'mars', 'mars:x']) {
    const r = await spawnOn(server, env, WAITS);
    assert.equal(r.status, 404, env);
    assert.equal(r.json.error?.code, 'not_found');
    assert.match(r.json.error?.message ?? '', /environment/);
  }
  const offline = await spawnOn(server, 'runner:r2', WAITS);
  assert.equal(offline.status, 503);
  assert.equal(offline.json.error?.code, 'unavailable');
  assert.match(offline.json.error?.message ?? '', /runner:r2 is offline/);
  const notOffered = await spawnOn(server, 'runner:r1', { runtime: 'command', command: ['true'] });
  assert.equal(notOffered.status, 422);
  assert.equal(notOffered.json.error?.code, 'runtime_unavailable');
  const ok = await spawnOn(server, 'runner:r1', WAITS);
  assert.equal(ok.status, 200);
  assert.equal((ok.json.session as { runner?: string }).runner, 'runner:r1');

  const list = await server.api<{ runners: Array<{ name: string; status: string; runtimes: string[] }> }>(
    'GET',
    '/v1/runners',
  );
  const by = Object.fromEntries(list.json.runners.map((r) => [r.name, r]));
  assert.equal(by.r1?.status, 'online');
  assert.deepEqual(by.r1?.runtimes, ['script']);
  assert.equal(by.r2?.status, 'offline');

  const again = await server.api<{ error: { code: string } }>('POST', '/v1/runners', { name: 'r1' });
  assert.equal(again.status, 409);
  const bad = await server.api<{ error: { code: string } }>('POST', '/v1/runners', { name: 'Bad Name' });
  assert.equal(bad.status, 400);
  const missing = await server.api<{ error: { code: string } }>('POST', '/v1/runners/ghost/revoke');
  assert.equal(missing.status, 404);
});

it('a task waits for its environment and is dispatched there once a runner connects', async () => {
  const t = await server.api<{ task: { id: string } }>('POST', '/v1/tasks', {
    title: 'on r2',
    prompt: 'wait',
    environment: 'runner:r2',
    spawn: { runtime: 'script', script: { steps: [{ say: 'task up' }, { wait: {} }] } },
  });
  assert.equal(t.status, 200, JSON.stringify(t.json));
  const id = t.json.task.id;
  const task = () =>
    server.api<{ task: { status: string; reason: string | null; sessionId: string | null } }>(
      'GET',
      `/v1/tasks/${id}`,
    );
  await until('the task to wait for runner:r2', async () =>
    /runner:r2 is not connected/.test((await task()).json.task.reason ?? '') ? true : undefined,
  );
  runners.push(await startRunner({ url: server.url, token: tokens.r2!, name: 'r2' }));
  const sessionId = await until(
    'the task dispatched',
    async () => (await task()).json.task.sessionId ?? undefined,
  );
  const s = await server.api<{ session: { runner: string } }>('GET', `/v1/sessions/${sessionId}`);
  assert.equal(s.json.session.runner, 'runner:r2');
});

it('a dropped runner’s sessions fail over to another runner of the same name', async () => {
  const a = await startRunner({ url: server.url, token: tokens.pool!, name: 'pool' });
  const b = await startRunner({ url: server.url, token: tokens.pool!, name: 'pool' });
  runners.push(a, b);
  const r = await spawnOn(server, 'runner:pool', WAITS);
  assert.equal(r.status, 200);
  const id = r.json.session.id;
  const holder = async () => {
    const show = await server.api<{ connectionList: Array<{ pid: number; agents: string[] }> }>(
      'GET',
      '/v1/runners/pool',
    );
    return show.json.connectionList.find((c) => c.agents.includes(id))?.pid;
  };
  const first = await until('the agent placed', holder);
  const [dies, lives] = first === a.child.pid ? [a, b] : [b, a];
  await dies.crash();
  const next = await until('the agent back on the other runner', async () => {
    const pid = await holder();
    return pid === lives.child.pid ? pid : undefined;
  });
  assert.equal(next, lives.child.pid);
  assert.notEqual(await statusOf(server, id), 'suspended');
  const events = await server.api<{
    events: Array<{ type: string; payload: { to?: string; reason?: string } }>;
  }>('GET', `/v1/sessions/${id}/events?limit=200`);
  const suspended = events.json.events.filter(
    (e) => e.type === 'session.status' && e.payload.to === 'suspended',
  );
  assert.equal(suspended.length, 1);
  assert.equal(suspended[0]?.payload.reason, 'runner pool disconnected');
});

it('tasks and personas name environments: unknown ones are refused, a persona’s is where its sessions run', async () => {
  const task = await server.api<{ error: { code: string } }>('POST', '/v1/tasks', {
    title: 'nowhere',
    prompt: 'x',
    environment: 'runner:nope',
  });
  assert.equal(task.status, 404);
  assert.equal(task.json.error.code, 'not_found');
  const badPersona = await server.api<{ error: { code: string } }>('POST', '/v1/personas', {
    name: 'far',
    runtime: 'script',
    environmentId: 'runner:nope',
  });
  assert.equal(badPersona.status, 404);
  const persona = await server.api('POST', '/v1/personas', {
    name: 'on-r1',
    runtime: 'script',
    environmentId: 'runner:r1',
    config: { script: WAITS.script },
  });
  assert.equal(persona.status, 200, JSON.stringify(persona.json));
  const r = await server.api<{ session: { id: string; runner: string } }>('POST', '/v1/sessions', {
    personaId: 'on-r1',
  });
  assert.equal(r.status, 200, JSON.stringify(r.json));
  assert.equal(r.json.session.runner, 'runner:r1');
  await until('the persona’s session running on r1', async () =>
    (await statusOf(server, r.json.session.id)) !== 'pending' ? true : undefined,
  );
  assert.notEqual(await statusOf(server, r.json.session.id), 'stopped');
  const t = await server.api<{ task: { environment: string } }>('POST', '/v1/tasks', {
    title: 'as on-r1',
    prompt: 'x',
    personaId: 'on-r1',
    hold: true,
  });
  assert.equal(t.status, 200, JSON.stringify(t.json));
  assert.equal(t.json.task.environment, 'runner:r1');
});
