import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { type LiveServer, liveServer } from '../orchestration/live-server.ts';

// biome-ignore lint/suspicious/noExplicitAny: CLI JSON output
type Any = any;

describe('the coordinator from the CLI (a real server)', () => {
  let live: LiveServer | undefined;
  after(async () => {
    await live?.stop();
  });

  it('warren agents|services|invocations|delegations|outbox|keys, generated from the same syscalls', {
    timeout: 90_000,
  }, async () => {
    live = await liveServer();
    const json = async (...args: string[]): Promise<Any> => JSON.parse(await live!.ok(...args, '--json'));
    const a = (await json('agents', 'spawn', '--zone-id', 'default', '--application_id', 'app')).agent;
    const svc = (
      await json(
        'services',
        'register',
        '--zone-id',
        'default',
        '--agent-id',
        a.id,
        '--endpoint_url',
        'http://127.0.0.1:9/x',
      )
    ).service;
    const inv = await json(
      'invocations',
      'enqueue',
      '--zone-id',
      'default',
      '--service_id',
      svc.id,
      '--idempotency_key',
      'k',
      '--method',
      'm',
    );
    assert.equal(inv.created, true);
    assert.deepEqual((await json('delegations', 'list', '--zone-id', 'default')).delegations, []);
    assert.deepEqual((await json('outbox', 'list', '--zone-id', 'default', '--status', 'dead')).events, []);
    // The agent is a warren session: `warren ps` lists it.
    const ps = await live.server.api<Any>('GET', '/v1/sessions');
    assert.ok(ps.json.sessions.some((s: Any) => s.id === a.id));
    assert.ok((await json('keys', 'list')).keys.some((k: Any) => k.name === 'admin'));
  });
});
