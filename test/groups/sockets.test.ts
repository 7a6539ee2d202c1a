/**
 * The per-group sockets: identity and tier from the socket path, the tier × tool matrix of
 * all 20 tools, grants narrowing, Start/Stop with the agent's life, a restart between
 * invocations, and the same through a real `socat` child (seed 002's MCP entry).
 */
import assert from 'node:assert/strict';
import { existsSync, statSync } from 'node:fs';
import { it } from 'node:test';
import { GROUP_TOOLS, TOOL_TIERS } from '../../src/plugins/groups/tiers.ts';
import { call, forEachWarren, until } from '../helpers/warrens.ts';
import {
  type Any,
  dataDir,
  errorOf,
  names,
  openGroups,
  socatClient,
  socatSkip,
  socketClient,
  socketOf,
  start,
  tree,
} from './helpers.ts';

/** What each tier lists: seed 002's table. */
const expected = (tier: number) => GROUP_TOOLS.filter((t) => tier <= TOOL_TIERS[t]).sort();

forEachWarren('groups: sockets', (t) => {
  it('the socket path decides identity and tier; tools/list and calls follow the tier × tool matrix', async () => {
    const { w, dir } = await openGroups(t);
    const folders = await tree(w);
    for (const f of folders) await start(w, dir, f);
    assert.equal(statSync(socketOf(dir, 'main')).mode & 0o777, 0o600);
    assert.equal(statSync(`${dir}/ipc/main`).mode & 0o777, 0o700);

    assert.equal(expected(0).length, 20);
    for (const [tier, folder] of folders.entries()) {
      const c = await socketClient(socketOf(dir, folder));
      assert.deepEqual(await names(c), expected(tier), `tier ${tier} lists`);
      // Every tool not listed is forbidden, naming the tier and the rule.
      for (const tool of GROUP_TOOLS.filter((x) => !expected(tier).includes(x))) {
        const e = errorOf(await c.callTool({ name: tool, arguments: {} }));
        assert.equal(e?.code, 'forbidden', `${folder} ${tool}`);
        assert.match(e!.message, new RegExp(`tier ${tier}`));
        assert.match(e!.message, new RegExp(`needs tier ${TOOL_TIERS[tool]}`));
      }
      // Identity is the path's: get_groups (tier ≤ 1) answers for the socket's group whatever `group` says.
      if (tier <= 1) {
        const r = await c.callTool({ name: 'get_groups', arguments: { group: 'main/a/b/c' } });
        const seen = (r.structuredContent as Any).groups.map((g: Any) => g.folder);
        assert.deepEqual(seen, tier === 0 ? folders : folders.slice(1));
      }
      // A tool the tier has, called: send_reply is everyone's (it needs a chat first).
      const reply = errorOf(await c.callTool({ name: 'send_reply', arguments: { text: 'hi' } }));
      assert.equal(reply?.code, 'invalid_input');
      assert.match(reply!.message, new RegExp(`group ${folder} has had no message`));
      // Unknown tools are forbidden too, not listed.
      assert.equal(errorOf(await c.callTool({ name: 'ipc_spawn', arguments: {} }))?.code, 'forbidden');
    }
  });

  it('grant rules narrow a group’s tools when its socket opens; deny wins over allow', async () => {
    const { w, dir } = await openGroups(t);
    await tree(w);
    await call(w, 'group_rules', {
      folder: 'main/a',
      rules: ['allow:*_task*', 'allow:send_*', 'deny:send_document'],
    });
    await start(w, dir, 'main/a');
    const c = await socketClient(socketOf(dir, 'main/a'));
    assert.deepEqual(await names(c), [
      'cancel_task',
      'get_task',
      'list_tasks',
      'schedule_task',
      'send_message',
      'send_reply',
      'update_task',
    ]);
    const denied = errorOf(await c.callTool({ name: 'send_document', arguments: { path: 'x' } }));
    assert.equal(denied?.code, 'forbidden');
    assert.match(denied!.message, /deny:send_document/);
    const unallowed = errorOf(await c.callTool({ name: 'list_routes', arguments: {} }));
    assert.match(unallowed!.message, /allow rules/);
    // Rules never widen: allow:* on a worker still leaves it send_reply only.
    await call(w, 'group_rules', { folder: 'main/a/b/c', rules: ['allow:*'] });
    await start(w, dir, 'main/a/b/c');
    assert.deepEqual(await names(await socketClient(socketOf(dir, 'main/a/b/c'))), ['send_reply']);
    // New rules apply when the socket next opens (at the agent's next start).
    await call(w, 'group_rules', { folder: 'main/a', rules: ['deny:*'] });
    assert.equal((await names(c)).length, 7);
    await call(w, 'clear_session', { target: 'main/a' });
    await until(() => !existsSync(socketOf(dir, 'main/a')), 15_000, 'the socket to close');
    await start(w, dir, 'main/a');
    assert.deepEqual(await names(await socketClient(socketOf(dir, 'main/a'))), []);
    await assert.rejects(call(w, 'group_rules', { folder: 'main/a', rules: ['maybe:x'] }), /allow:<glob>/);
  });

  it('the socket opens before the agent starts and goes when it ends; a restarted server reopens it', async () => {
    const dir = dataDir();
    const location = t.location();
    const first = await openGroups(t, dir, location);
    await tree(first.w);
    const started = await start(first.w, dir, 'main/a');
    const path = socketOf(dir, 'main/a');
    const c = await socketClient(path);
    assert.equal((await names(c)).length, 18);
    // The agent ends: its socket is closed and removed.
    await call(first.w, 'kill', { id: started.sessionId });
    await until(() => !existsSync(path), 15_000, 'the socket to go');
    // Started again by a message; then the server restarts under a live agent.
    const again = await call(first.w, 'inject_message', { target: 'main/a', text: 'wake' });
    assert.equal(again.how, 'started');
    await until(() => existsSync(path), 15_000, 'the socket to return');
    await first.w.close();
    assert.equal(existsSync(path), false, 'a closed server leaves no socket behind');
    // As `warren serve` does: agents resume once everything (the groups plugin too) is up.
    const second = await t.open({
      location,
      deferResume: true,
      plugins: { config: { groups: { dataDir: dir } } },
    });
    second.kernel.resumeLost();
    await until(() => existsSync(path), 20_000, 'the socket after the restart');
    const c2 = await socketClient(path);
    assert.equal((await names(c2)).length, 18);
    const groups = (await c2.callTool({ name: 'get_groups', arguments: {} })).structuredContent as Any;
    assert.equal(groups.groups[0].folder, 'main/a');
    assert.equal(groups.groups[0].sessionId, again.sessionId);
  });

  it('works through socat, as the seed’s MCP entry runs it', {
    skip: socatSkip(),
  }, async () => {
    const { w, dir } = await openGroups(t);
    await tree(w);
    await start(w, dir, 'main/a/b');
    const c = await socatClient(socketOf(dir, 'main/a/b'));
    assert.deepEqual(await names(c), expected(2));
    const sent = await c.callTool({
      name: 'send_message',
      arguments: { chat_jid: 'tg:1', text: 'hi from b' },
    });
    assert.equal(errorOf(sent), null);
    const ev = (await call(w, 'events', { type: 'group.sent' })).events as Any[];
    assert.equal(ev.length, 1);
    assert.equal(ev[0].actor, 'operator:group:main/a/b');
    assert.equal(ev[0].payload.folder, 'main/a/b');
    assert.equal(
      errorOf(await c.callTool({ name: 'add_route', arguments: { seq: 1, match: '', target: 'main/a/b' } }))
        ?.code,
      'forbidden',
    );
  });
});
