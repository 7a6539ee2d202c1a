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
    const a = (
      await json('agents', 'spawn', '--zone-id', 'default', '--application-id', 'app', '--ttl-seconds', '600')
    ).agent;
    const svc = (
      await json(
        'services',
        'register',
        '--zone-id',
        'default',
        '--agent-id',
        a.id,
        '--endpoint-url',
        'http://127.0.0.1:9/x',
      )
    ).service;
    const inv = await json(
      'invocations',
      'enqueue',
      '--zone-id',
      'default',
      '--service-id',
      svc.id,
      // The wire name still works, as an alias of --idempotency-key.
      '--idempotency_key',
      'k',
      '--method',
      'm',
    );
    assert.equal(inv.created, true);
    assert.equal(inv.invocation.idempotency_key, 'k');
    assert.equal(a.ttl_seconds, 600);
    const b = (await json('agents', 'spawn', '--zone-id', 'default', '--application-id', 'app')).agent;
    const edge = (
      await json(
        'delegations',
        'create',
        '--zone-id',
        'default',
        '--source-agent-id',
        a.id,
        '--target-agent-id',
        b.id,
      )
    ).delegation;
    assert.equal(edge.source_agent_id, a.id);
    assert.deepEqual(
      (await json('delegations', 'list', '--zone-id', 'default', '--agent-id', b.id)).delegations.map(
        (d: Any) => d.id,
      ),
      [edge.id],
    );
    await json('delegations', 'revoke', edge.id, '--zone-id', 'default');
    const twice = await live.cli(
      'agents',
      'spawn',
      '--zone-id',
      'default',
      '--application-id',
      'x',
      '--application_id',
      'y',
    );
    assert.equal(twice.code, 2);
    assert.match(twice.stderr, /--application-id and --application_id are the same option/);
    const help = await live.ok('agents', 'spawn', '--help');
    assert.match(help, /--application-id, --application_id/);
    assert.deepEqual((await json('outbox', 'list', '--zone-id', 'default', '--status', 'dead')).events, []);
    // The agent is a warren session: `warren ps` lists it.
    const ps = await live.server.api<Any>('GET', '/v1/sessions');
    assert.ok(ps.json.sessions.some((s: Any) => s.id === a.id));
    assert.ok((await json('keys', 'list')).keys.some((k: Any) => k.name === 'admin'));
  });
});
