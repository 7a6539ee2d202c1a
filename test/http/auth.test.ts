import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { type Running, serve } from '../../src/app/server.ts';
import { request, startHttp } from '../helpers/http.ts';
import { forEachWarren, idleScript, waitStatus } from '../helpers/warrens.ts';

forEachWarren('HTTP auth', (t) => {
  it('refuses a request without credentials, with a bad key or a bad token: 401 unauthenticated', async () => {
    const h = await startHttp(t);
    const before = await h.head();
    const cases: Array<[string, string | null]> = [
      ['no header', null],
      ['a key that is not ours', `wk_${'x'.repeat(43)}`],
      ['garbage', 'hello'],
      ['a forged session token', 'wst_ses_nope.AAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAAA'],
      // Shaped like a JWT, with no issuer configured: an API key that is not ours, not a crash.
      ['a JWT with no issuer configured', 'eyJhbGciOiJIUzI1NiJ9.eyJzdWIiOiJ4In0.c2lnbmF0dXJl'],
    ];
    for (const [what, auth] of cases) {
      for (const [method, path, body] of [
        ['GET', '/v1/sessions', undefined],
        ['POST', '/v1/syscalls/ps', {}],
        ['POST', '/v1/streams', { name: 'nope' }],
      ] as const) {
        const r = await h.api(method, path, body, { auth });
        assert.equal(r.status, 401, `${what}: ${method} ${path}`);
        assert.equal(r.json.error.code, 'unauthenticated', what);
        assert.equal(typeof r.json.error.message, 'string');
      }
    }
    const noHeader = await h.api('GET', '/v1/sessions', undefined, { auth: null });
    assert.match(noHeader.json.error.message, /Authorization: Bearer/);
    // A header that is not a bearer credential at all.
    const basic = await h.api('GET', '/v1/sessions', undefined, {
      auth: null,
      headers: { authorization: `Basic ${Buffer.from('a:b').toString('base64')}` },
    });
    assert.equal(basic.status, 401);
    // A token signed for a session that exists, with the wrong MAC.
    const a = await h.api('POST', '/v1/sessions', { script: idleScript });
    assert.equal(a.status, 200);
    const good = h.tokenOf(a.json.session.id);
    const tampered = good.slice(0, -2) + (good.endsWith('AA') ? 'BB' : 'AA');
    const r = await h.api('POST', '/v1/syscalls/ipc_list_fds', {}, { auth: tampered });
    assert.equal(r.status, 401);
    assert.equal(r.json.error.code, 'unauthenticated');
    // Only the spawn wrote: the refused requests left nothing behind.
    const spawnEvents = (await h.api('GET', `/v1/sessions/${a.json.session.id}/events?limit=1000`)).json
      .events;
    assert.ok(spawnEvents.length > 0);
    assert.ok(before < (await h.head()));
    // Let the agent settle so the log stands still, then refuse a write.
    await waitStatus(h.warren, a.json.session.id, 'idle');
    await h.warren.store.writer.drained();
    const refusedHead = await h.head();
    await h.api('POST', '/v1/streams', { name: 'nope' }, { auth: null });
    assert.equal(await h.head(), refusedHead);
    const streams = (await h.api('GET', '/v1/streams')).json.streams;
    assert.ok(!streams.some((s: { name: string }) => s.name === 'nope'));
  });

  it('the live event stream needs credentials too', async () => {
    const h = await startHttp(t);
    const r = await request(h.url, 'GET', '/v1/events/live');
    assert.equal(r.status, 401);
    assert.equal(r.json.error.code, 'unauthenticated');
  });

  it('a session token works for ipc_* on its own fds, and only while the session lives', async () => {
    const h = await startHttp(t);
    // `ps` is not an orchestrator's default: it asks for the sessions group.
    const spawned = (
      await h.api('POST', '/v1/sessions', { script: idleScript, title: 'tok', toolGroups: ['sessions'] })
    ).json;
    const id: string = spawned.session.id;
    await waitStatus(h.warren, id, 'idle');
    const token = h.tokenOf(id);
    assert.match(token, /^wst_/);

    const mine = await h.api('POST', '/v1/syscalls/ipc_list_fds', {}, { auth: token });
    assert.equal(mine.status, 200, JSON.stringify(mine.json));
    // Its own fds: the child end of its lifecycle, pipe and stdin.
    assert.ok(mine.json.fds.length >= 2);
    for (const f of mine.json.fds) assert.equal(f.holder, id);
    const names = mine.json.fds.map((f: { streamName: string }) => f.streamName).sort();
    assert.ok(names.includes(`lifecycle:${id}`), names.join(','));
    assert.ok(names.includes(`stdin:${id}`), names.join(','));
    // The same list over the generated REST route.
    const viaRoute = await h.api('GET', '/v1/fds', undefined, { auth: token });
    assert.deepEqual(
      viaRoute.json.fds.map((f: { id: string }) => f.id),
      mine.json.fds.map((f: { id: string }) => f.id),
    );
    // The operator's own fds are different ones.
    const ops = (await h.api('POST', '/v1/syscalls/ipc_list_fds', {})).json.fds;
    for (const f of ops) assert.notEqual(f.holder, id);

    // It can make a stream and write to it through its fd.
    const made = await h.api('POST', '/v1/syscalls/ipc_create_stream', { name: 'tok-room' }, { auth: token });
    assert.equal(made.status, 200, JSON.stringify(made.json));
    const wrote = await h.api(
      'POST',
      `/v1/fds/${made.json.fd}/write`,
      { message: 'hello from a token' },
      { auth: token },
    );
    assert.equal(wrote.status, 200, JSON.stringify(wrote.json));
    // It sees only its own streams, and its ps shows only its children (none).
    const streams = (await h.api('GET', '/v1/streams', undefined, { auth: token })).json.streams;
    assert.deepEqual(
      streams.map((s: { name: string }) => s.name),
      ['tok-room'],
    );
    assert.deepEqual((await h.api('GET', '/v1/sessions', undefined, { auth: token })).json.sessions, []);
    // An fd number it does not hold is not found (the operator's room fd is not its fd).
    const room = (await h.api('POST', '/v1/streams', { name: 'op-room' })).json;
    const notMine = await h.api('POST', `/v1/fds/${room.fd + 50}/write`, { message: 'x' }, { auth: token });
    assert.equal(notMine.status, 404);
    assert.equal(notMine.json.error.code, 'not_found');

    // Operator-only syscalls: 403 forbidden, and nothing written.
    await h.warren.store.writer.drained();
    const head = await h.head();
    for (const [method, path, body] of [
      ['POST', '/v1/streams', { name: 'sneaky' }],
      ['POST', '/v1/syscalls/streams_create', { name: 'sneaky' }],
      ['GET', '/v1/events', undefined],
      ['POST', '/v1/syscalls/events', {}],
      ['POST', '/v1/streams/op-room/attach', { session: id }],
      ['DELETE', '/v1/streams/op-room', undefined],
    ] as const) {
      const r = await h.api(method, path, body, { auth: token });
      assert.equal(r.status, 403, `${method} ${path}: ${JSON.stringify(r.json)}`);
      assert.equal(r.json.error.code, 'forbidden');
      assert.match(r.json.error.message, /cannot be called by a session/);
    }
    const live = await request(h.url, 'GET', '/v1/events/live', undefined, { auth: token });
    assert.equal(live.status, 403);
    assert.equal(live.json.error.code, 'forbidden');
    assert.equal(await h.head(), head, 'refused calls wrote nothing');

    // Once the session stops, its token is refused with a message that says why.
    await h.api('POST', `/v1/sessions/${id}/kill`, {});
    await waitStatus(h.warren, id, 'stopped');
    const dead = await h.api('POST', '/v1/syscalls/ipc_list_fds', {}, { auth: token });
    assert.equal(dead.status, 401);
    assert.equal(dead.json.error.code, 'unauthenticated');
    assert.match(dead.json.error.message, /has stopped/);
    assert.ok(dead.json.error.message.includes(id));
  });

  it('the operator key works for every surface: generated routes, /v1/syscalls, the catalogue', async () => {
    const h = await startHttp(t);
    assert.equal((await h.api('GET', '/v1/sessions')).status, 200);
    assert.equal((await h.api('POST', '/v1/syscalls/ps', { all: true })).status, 200);
    const cat = await h.api('GET', '/v1/syscalls');
    assert.equal(cat.status, 200);
    const names = cat.json.syscalls.map((s: { name: string }) => s.name);
    for (const n of ['ipc_spawn', 'ipc_list_fds', 'streams_create', 'events', 'kill'])
      assert.ok(names.includes(n));
    // An unknown syscall is a typed 404.
    const nope = await h.api('POST', '/v1/syscalls/no_such_thing', {});
    assert.equal(nope.status, 404);
    assert.equal(nope.json.error.code, 'not_found');
    // The health check needs nothing.
    assert.deepEqual((await request(h.url, 'GET', '/healthz')).json, { ok: true });
  });
});

describe('operator key on first start (serve)', () => {
  const dirs: string[] = [];
  const running: Running[] = [];
  after(async () => {
    await Promise.allSettled(running.map((r) => r.stop()));
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  });

  const start = async (dataDir: string) => {
    let out = '';
    const r = await serve(
      { host: '127.0.0.1', port: 0, dataDir, durability: 'process', demo: false },
      {
        write: (s: string) => {
          out += s;
        },
      },
    );
    running.push(r);
    return { r, out: () => out };
  };

  it('writes operator.key (0600) and prints the key once; a second start on the same data reuses it', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'warren-key-'));
    dirs.push(dataDir);
    const first = await start(dataDir);
    const file = join(dataDir, 'operator.key');
    const key = readFileSync(file, 'utf8').trim();
    assert.match(key, /^wk_[A-Za-z0-9_-]{20,}$/);
    assert.equal(statSync(file).mode & 0o777, 0o600);
    assert.ok(first.out().includes(key), 'the key is printed on first start');
    assert.match(first.out(), /shown once/);
    // The key authenticates.
    assert.equal((await request(first.r.url, 'GET', '/v1/sessions', undefined, { auth: key })).status, 200);
    const stored = await first.r.warren.store.reader.selectFrom('operator_keys').selectAll().execute();
    assert.equal(stored.length, 1);
    assert.notEqual(stored[0]!.hash, key, 'the key is stored hashed');
    assert.ok(!JSON.stringify(stored).includes(key));
    await first.r.stop();

    const mtime = statSync(file).mtimeMs;
    const second = await start(dataDir);
    assert.ok(!second.out().includes('wk_'), `no key printed on the second start:\n${second.out()}`);
    assert.doesNotMatch(second.out(), /shown once/);
    assert.equal(readFileSync(file, 'utf8').trim(), key, 'the file is not rewritten');
    assert.equal(statSync(file).mtimeMs, mtime);
    assert.equal(statSync(file).mode & 0o777, 0o600);
    const keys = await second.r.warren.store.reader.selectFrom('operator_keys').selectAll().execute();
    assert.equal(keys.length, 1, 'no second key was created');
    assert.equal((await request(second.r.url, 'GET', '/v1/sessions', undefined, { auth: key })).status, 200);
    const created = await second.r.warren.store.log.events({ type: 'operator.key_created' });
    assert.equal(created.length, 1);
    await second.r.stop();
  });
});
