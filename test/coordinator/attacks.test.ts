/**
 * An agent acts for its own sessions, in its own zone, and nothing more: what a hostile
 * agent (a session token, the same syscalls as its MCP tools) tries against another agent.
 */
import assert from 'node:assert/strict';
import { after, it } from 'node:test';
import { mcpClients } from '../helpers/mcp.ts';
import { forEachWarren, until } from '../helpers/warrens.ts';
import { coordinatorWarren } from './helpers.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are checked by the tests that read them
type Any = any;

const Z = '/zones/default';
const asleep = { script: { steps: [{ sleep: 600_000 }] } };

forEachWarren('coordinator: an agent against another agent', (target) => {
  const clients = mcpClients();
  after(() => clients.closeAll());

  it('cannot complete, read, cancel or steal by key another agent’s invocations, touch its services, delegate, or leave its zone', async () => {
    const h = await coordinatorWarren(target, { deadlineSweepIntervalMs: 40, outbox: { intervalMs: 40 } });
    const spawn = async () =>
      (await h.api('POST', `${Z}/agents`, { application_id: 'app', runtime: 'script', config: asleep })).json
        .agent.id as string;
    const [victim, attacker, caller] = [await spawn(), await spawn(), await spawn()];
    const as = (id: string) => ({ auth: h.tokenOf(id) });
    const code = (r: Any) => `${r.status} ${r.json?.error?.code}`;

    // The victim's service, and an invocation of it made by a third agent.
    const svc = (
      await h.api(
        'POST',
        `${Z}/agents/${victim}/services`,
        { endpoint_url: 'http://127.0.0.1:9/victim' },
        as(victim),
      )
    ).json.service;
    assert.ok(svc?.id);
    const made = await h.api(
      'POST',
      `${Z}/invocations`,
      {
        service_id: svc.id,
        idempotency_key: 'secret-key',
        method: 'm',
        params: { secret: 'only-the-caller-may-see-this' },
      },
      as(caller),
    );
    assert.equal(made.json.created, true);
    const inv = made.json.invocation;
    await until(
      async () => (await h.api('GET', `${Z}/invocations/${inv.id}`)).json.invocation.status === 'running',
      15_000,
      'the invocation to be delivered',
    );

    // Services: register for, update or heartbeat another agent's, even through its own agent id.
    assert.equal(
      code(
        await h.api(
          'POST',
          `${Z}/agents/${victim}/services`,
          { endpoint_url: 'http://127.0.0.1:9/evil' },
          as(attacker),
        ),
      ),
      '403 forbidden',
    );
    assert.equal(
      code(
        await h.api(
          'PATCH',
          `${Z}/agents/${victim}/services/${svc.id}`,
          { health: 'unhealthy' },
          as(attacker),
        ),
      ),
      '403 forbidden',
    );
    assert.equal(
      code(await h.api('POST', `${Z}/agents/${victim}/services/${svc.id}/heartbeat`, {}, as(attacker))),
      '403 forbidden',
    );
    assert.equal(
      code(await h.api('POST', `${Z}/agents/${attacker}/services/${svc.id}/heartbeat`, {}, as(attacker))),
      '404 not_found',
      'its own agent id with another agent’s service id',
    );

    // Invocations: complete (as neither target), read, cancel, list, or replay the key.
    assert.equal(
      code(
        await h.api(
          'POST',
          `${Z}/invocations/${inv.id}/complete`,
          { status: 'succeeded', result: { forged: true } },
          as(attacker),
        ),
      ),
      '403 forbidden',
    );
    assert.equal(
      code(await h.api('POST', `${Z}/invocations/${inv.id}/complete`, { status: 'succeeded' }, as(caller))),
      '403 forbidden',
      'its source does not complete it either',
    );
    assert.equal(
      code(await h.api('GET', `${Z}/invocations/${inv.id}`, undefined, as(attacker))),
      '404 not_found',
    );
    assert.equal(
      code(await h.api('POST', `${Z}/invocations/${inv.id}/cancel`, {}, as(attacker))),
      '403 forbidden',
    );
    assert.deepEqual((await h.api('GET', `${Z}/invocations`, undefined, as(attacker))).json.invocations, []);
    const replay = await h.api(
      'POST',
      `${Z}/invocations`,
      { service_id: svc.id, idempotency_key: 'secret-key', method: 'm' },
      as(attacker),
    );
    assert.equal(code(replay), '409 conflict');
    // Neither its params nor its id (a request id is random text: test for the marker itself).
    const leaked = JSON.stringify(replay.json);
    assert.ok(!leaked.includes('only-the-caller-may-see-this'), 'the other caller’s params do not leak');
    assert.ok(!leaked.includes(inv.id), 'nor the invocation’s id');
    // Its own caller gets the original back.
    const again = await h.api(
      'POST',
      `${Z}/invocations`,
      { service_id: svc.id, idempotency_key: 'secret-key', method: 'm' },
      as(caller),
    );
    assert.deepEqual([again.json.created, again.json.invocation.id], [false, inv.id]);

    // Delegation is the operator's (and a JWT client's): an agent can neither grant nor revoke.
    assert.equal(
      code(
        await h.api(
          'POST',
          `${Z}/delegations`,
          { source_agent_id: victim, target_agent_id: attacker, constraints: { scopes: ['*'] } },
          as(attacker),
        ),
      ),
      '403 forbidden',
    );
    const edge = (
      await h.api('POST', `${Z}/delegations`, { source_agent_id: victim, target_agent_id: caller })
    ).json.delegation;
    assert.equal(
      code(await h.api('DELETE', `${Z}/delegations/${edge.id}`, undefined, as(attacker))),
      '403 forbidden',
    );
    assert.equal(code(await h.api('GET', `${Z}/delegations`, undefined, as(attacker))), '403 forbidden');
    // Nor spawn, suspend or terminate agents.
    assert.equal(
      code(await h.api('DELETE', `${Z}/agents/${victim}`, undefined, as(attacker))),
      '403 forbidden',
    );
    assert.equal(
      code(await h.api('POST', `${Z}/agents`, { application_id: 'app' }, as(attacker))),
      '403 forbidden',
    );

    // Another zone: refused before anything is looked up.
    assert.equal(
      code(await h.api('GET', `/zones/other/invocations/${inv.id}`, undefined, as(attacker))),
      '403 forbidden',
    );

    // Nothing changed: the victim's service and the invocation are as they were.
    const still = (await h.api('GET', `${Z}/invocations/${inv.id}`)).json.invocation;
    assert.deepEqual([still.status, still.result], ['running', null]);
    assert.deepEqual(
      (await h.api('GET', `${Z}/agents/${victim}/services`)).json.services.map((s: Any) => s.endpoint_url),
      ['http://127.0.0.1:9/victim'],
    );
    // The victim completes it itself.
    const done = await h.api(
      'POST',
      `${Z}/invocations/${inv.id}/complete`,
      { status: 'succeeded', result: { ok: true } },
      as(victim),
    );
    assert.equal(done.json.invocation.status, 'succeeded');

    // Over MCP an agent sees what serves and invokes, and no delegation or agent control.
    const tools = (await (await clients.connect(h, h.tokenOf(attacker))).listTools()).tools.map(
      (t) => t.name,
    );
    for (const n of ['invocation_complete', 'service_heartbeat', 'service_register'])
      assert.ok(tools.includes(n), n);
    for (const n of ['delegation_create', 'delegation_revoke', 'agent_spawn', 'agent_delete', 'outbox_list'])
      assert.ok(!tools.includes(n), n);
  });
});
