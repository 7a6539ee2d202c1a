/**
 * Routes and inbound messages: visibility by tier, evaluation order and validation, delivery
 * through `POST /v1/inbound` (authenticated) to the target group's agent, and the unrouted inbox.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { startHttp } from '../helpers/http.ts';
import { call, forEachWarren, until } from '../helpers/warrens.ts';
import {
  type Any,
  dataDir,
  errorOf,
  idleAgent,
  inputs,
  socketClient,
  socketOf,
  start,
  tree,
} from './helpers.ts';

const msg = (over: Record<string, unknown> = {}) => ({
  platform: 'telegram',
  room: '-5075870332',
  chat_jid: 'tg:-5075870332',
  sender: 'alice',
  verb: 'message',
  text: 'hello',
  ...over,
});

forEachWarren('groups: routes and inbound', (t) => {
  it('route visibility by tier; writes only within the caller’s subtree; validation is typed', async () => {
    const dir = dataDir();
    const w = await t.open({ plugins: { config: { groups: { dataDir: dir } } } });
    await tree(w);
    await call(w, 'register_group', { folder: 'ops', agent: idleAgent });
    const add = (seq: number, match: string, target: string) => call(w, 'add_route', { seq, match, target });
    await add(1, 'platform=telegram', 'main');
    await add(2, 'room=a*', 'main/a');
    await add(3, 'room=b*', 'main/a/b');
    await add(4, 'platform=slack', 'ops');
    for (const f of ['main', 'main/a', 'main/a/b']) await start(w, dir, f);
    const root = await socketClient(socketOf(dir, 'main'));
    const world = await socketClient(socketOf(dir, 'main/a'));
    const agent = await socketClient(socketOf(dir, 'main/a/b'));
    const targets = async (c: Any) =>
      ((await c.callTool({ name: 'list_routes', arguments: {} })).structuredContent.routes as Any[]).map(
        (r) => r.target,
      );
    assert.deepEqual(await targets(root), ['main', 'main/a', 'main/a/b', 'ops']);
    assert.deepEqual(await targets(world), ['main/a', 'main/a/b']);
    assert.equal(errorOf(await agent.callTool({ name: 'list_routes', arguments: {} }))?.code, 'forbidden');
    // An operator acting as a group sees what the group sees.
    assert.deepEqual(
      (await call(w, 'list_routes', { group: 'main/a' })).routes.map((r: Any) => r.target),
      ['main/a', 'main/a/b'],
    );

    // Writes: a world group routes to its subtree only; bad expressions are typed errors.
    const outside = errorOf(
      await world.callTool({ name: 'add_route', arguments: { seq: 9, match: '', target: 'main' } }),
    );
    assert.equal(outside?.code, 'forbidden');
    const bad = errorOf(
      await world.callTool({
        name: 'add_route',
        arguments: { seq: 9, match: 'channel=x', target: 'main/a' },
      }),
    );
    assert.equal(bad?.code, 'invalid_input');
    assert.match(bad!.message, /unknown key "channel"/);
    const missing = errorOf(
      await world.callTool({ name: 'add_route', arguments: { seq: 9, match: '', target: 'main/a/zz' } }),
    );
    assert.equal(missing?.code, 'not_found');
    const made = (
      await world.callTool({
        name: 'add_route',
        arguments: { seq: 0, match: 'verb=mention sender=b*', target: 'main/a/b' },
      })
    ).structuredContent as Any;
    assert.equal(made.route.match, 'sender=b* verb=mention', 'stored canonical');
    assert.equal(made.route.createdBy, 'operator:group:main/a');

    // set_routes replaces the routes of the caller's subtree, and nothing else.
    const set = await world.callTool({
      name: 'set_routes',
      arguments: { routes: [{ seq: 7, match: 'room=z*', target: 'main/a/b' }] },
    });
    assert.equal(errorOf(set), null);
    assert.deepEqual(await targets(root), ['main', 'ops', 'main/a/b']);
    const badSet = errorOf(
      await world.callTool({
        name: 'set_routes',
        arguments: { routes: [{ seq: 1, match: '', target: 'ops' }] },
      }),
    );
    assert.equal(badSet?.code, 'forbidden');
    assert.equal((await call(w, 'list_routes', {})).routes.length, 3, 'a refused set changes nothing');

    // delete_route: only a visible route.
    const opsRoute = (await call(w, 'list_routes', {})).routes.find((r: Any) => r.target === 'ops');
    assert.equal(
      errorOf(await world.callTool({ name: 'delete_route', arguments: { id: opsRoute.id } }))?.code,
      'not_found',
    );
    assert.equal(
      errorOf(await root.callTool({ name: 'delete_route', arguments: { id: opsRoute.id } }))?.code,
      'not_found',
      'root writes within its tree',
    );
    assert.deepEqual(await call(w, 'delete_route', { id: opsRoute.id }), { deleted: opsRoute.id });
    const events = (await call(w, 'events', { type: 'group.route_added' })).events as Any[];
    assert.equal(events.length, 5);
  });

  it('POST /v1/inbound: first matching route by seq delivers to the group’s agent (starting it), logs the decision; no match is kept', async () => {
    const dir = dataDir();
    const h = await startHttp(t, { plugins: { config: { groups: { dataDir: dir } } } });
    const w = h.warren;
    await tree(w);
    await call(w, 'register_group', { folder: 'noagent' });
    await call(w, 'add_route', { seq: 20, match: 'platform=telegram', target: 'main' });
    await call(w, 'add_route', { seq: 10, match: 'platform=telegram verb=mention', target: 'main/a' });
    await call(w, 'add_route', { seq: 30, match: 'platform=matrix', target: 'noagent' });

    const anon = await h.api('POST', '/v1/inbound', msg(), { auth: null });
    assert.equal(anon.status, 401);

    const first = await h.api('POST', '/v1/inbound', msg({ verb: 'mention', text: 'look at this' }));
    assert.equal(first.status, 200, JSON.stringify(first.json));
    assert.equal(first.json.routed, true);
    assert.equal(first.json.group, 'main/a', 'seq 10 before seq 20');
    assert.equal(first.json.how, 'started');
    const second = await h.api('POST', '/v1/inbound', msg({ verb: 'mention', text: 'and this' }));
    assert.equal(second.json.how, 'sent');
    assert.equal(second.json.sessionId, first.json.sessionId);
    const plain = await h.api('POST', '/v1/inbound', msg({ text: 'to main' }));
    assert.equal(plain.json.group, 'main');
    const got = await until(
      async () => {
        const xs = await inputs(w, first.json.sessionId);
        return xs.length >= 2 ? xs : null;
      },
      15_000,
      'both messages at the agent',
    );
    assert.match(got[0]!, /^\[telegram mention from alice in tg:-5075870332\]\nlook at this$/);
    assert.match(got[1]!, /and this$/);
    const routed = ((await call(w, 'events', { type: 'group.routed' })).events as Any[]).sort(
      (a, b) => a.seq - b.seq,
    );
    assert.deepEqual(
      routed.map((e) => [e.payload.group, e.payload.seq, e.payload.how]),
      [
        ['main/a', 10, 'started'],
        ['main/a', 10, 'sent'],
        ['main', 20, 'started'],
      ],
    );
    // The agent ends; the next message starts it afresh.
    await call(w, 'kill', { id: first.json.sessionId });
    await until(() => !w.plugins.get<Any>('groups').sockets.isOpen('main/a'), 15_000, 'main/a socket closed');
    const third = await h.api('POST', '/v1/inbound', msg({ verb: 'mention', text: 'again' }));
    assert.equal(third.json.how, 'started');
    assert.notEqual(third.json.sessionId, first.json.sessionId);

    // No route, or a group that cannot take it: the unrouted inbox, never dropped.
    const none = await h.api('POST', '/v1/inbound', msg({ platform: 'whatsapp', text: 'nobody' }));
    assert.equal(none.json.routed, false);
    assert.match(none.json.reason, /no route matched/);
    const stuck = await h.api(
      'POST',
      '/v1/inbound',
      msg({ platform: 'matrix', text: 'stuck', attachments: [{ name: 'a.png' }] }),
    );
    assert.equal(stuck.json.routed, false);
    assert.match(stuck.json.reason, /noagent has no agent/);
    const inbox = await h.api('GET', '/v1/inbound/unrouted');
    assert.deepEqual(
      inbox.json.messages.map((m: Any) => [m.platform, m.text]),
      [
        ['whatsapp', 'nobody'],
        ['matrix', 'stuck'],
      ],
    );
    assert.deepEqual(inbox.json.messages[1].attachments, [{ name: 'a.png' }]);
    const paged = await h.api('GET', '/v1/inbound/unrouted?limit=1');
    assert.equal(paged.json.messages.length, 1);
    assert.equal(paged.json.next, inbox.json.messages[0].id);
    assert.equal(((await call(w, 'events', { type: 'group.unrouted' })).events as Any[]).length, 2);
    // Routes changed: the next message sees the new order at once.
    await call(w, 'add_route', { seq: 1, match: 'platform=whatsapp', target: 'main' });
    assert.equal((await h.api('POST', '/v1/inbound', msg({ platform: 'whatsapp' }))).json.group, 'main');
  });
});
