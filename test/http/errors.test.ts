import assert from 'node:assert/strict';
import { it } from 'node:test';
import { type ApiResponse, type HttpWarren, startHttp } from '../helpers/http.ts';
import { forEachWarren, idleScript, until, waitStatus } from '../helpers/warrens.ts';

/** Every failure is `{ error: { code, message } }` with the status that fits. */
function assertError(r: ApiResponse, status: number, code: string, what = ''): void {
  assert.equal(r.status, status, `${what}: ${JSON.stringify(r.json)}`);
  assert.equal(r.json?.error?.code, code, `${what}: ${JSON.stringify(r.json)}`);
  assert.equal(typeof r.json.error.message, 'string', what);
  assert.ok(r.json.error.message.length > 0, what);
}

/** Run a request that must be refused before anything is written: the log's head does not move. */
async function refused(
  h: HttpWarren,
  req: () => Promise<ApiResponse>,
  status: number,
  code: string,
  what: string,
): Promise<ApiResponse> {
  await h.warren.store.writer.drained();
  const before = await h.head();
  const r = await req();
  assertError(r, status, code, what);
  // Give anything a half-done write could have scheduled a moment to show up.
  await h.warren.store.writer.drained();
  assert.equal(await h.head(), before, `${what}: the log moved after a refused request`);
  return r;
}

forEachWarren('HTTP typed errors', (t) => {
  it('malformed JSON, a non-object body, a wrong content type: 400 invalid_input', async () => {
    const h = await startHttp(t);
    await refused(
      h,
      () => h.api('POST', '/v1/streams', undefined, { raw: '{"name": "x",' }),
      400,
      'invalid_input',
      'truncated JSON on a generated route',
    );
    await refused(
      h,
      () => h.api('POST', '/v1/syscalls/streams_create', undefined, { raw: '{name: x}' }),
      400,
      'invalid_input',
      'malformed JSON on /v1/syscalls',
    );
    await refused(
      h,
      () => h.api('POST', '/v1/streams', ['room'] as unknown),
      400,
      'invalid_input',
      'an array body on a generated route',
    );
    await refused(
      h,
      () => h.api('POST', '/v1/syscalls/streams_create', [{ name: 'room' }] as unknown),
      400,
      'invalid_input',
      'an array body on /v1/syscalls',
    );
    await refused(
      h,
      () => h.api('POST', '/v1/streams', 'room' as unknown),
      400,
      'invalid_input',
      'a string body',
    );
    await refused(
      h,
      () =>
        h.api('POST', '/v1/streams', undefined, {
          raw: 'name=room',
          headers: { 'content-type': 'text/plain' },
        }),
      400,
      'invalid_input',
      'text/plain',
    );
    await refused(
      h,
      () => h.api('POST', '/v1/streams', undefined, { raw: '' }),
      400,
      'invalid_input',
      'an empty JSON body',
    );
    const streams = (await h.api('GET', '/v1/streams')).json.streams;
    assert.deepEqual(streams, [], 'no room was made by any of them');
  });

  it('unknown routes, sessions, streams and fds: 404 not_found', async () => {
    const h = await startHttp(t);
    const r = await refused(h, () => h.api('GET', '/v1/nothing-here'), 404, 'not_found', 'unknown route');
    assert.match(r.json.error.message, /no route GET \/v1\/nothing-here/);
    await refused(h, () => h.api('DELETE', '/v1/sessions'), 404, 'not_found', 'wrong method');
    await refused(h, () => h.api('GET', '/v1/sessions/ses_nope'), 404, 'not_found', 'session_show');
    await refused(h, () => h.api('GET', '/v1/sessions/ses_nope/events'), 404, 'not_found', 'session_events');
    await refused(h, () => h.api('POST', '/v1/sessions/ses_nope/kill', {}), 404, 'not_found', 'kill');
    await refused(
      h,
      () => h.api('POST', '/v1/sessions/ses_nope/send', { text: 'hi' }),
      404,
      'not_found',
      'send',
    );
    await refused(h, () => h.api('POST', '/v1/fds/77/read', {}), 404, 'not_found', 'unknown fd');
    await refused(h, () => h.api('GET', '/v1/streams/nope/transcript'), 404, 'not_found', 'transcript');
    await refused(h, () => h.api('DELETE', '/v1/streams/nope'), 404, 'not_found', 'close');
    const room = (await h.api('POST', '/v1/streams', { name: 'r404' })).json;
    assert.ok(room.fd >= 0);
    await refused(
      h,
      () => h.api('POST', '/v1/streams/r404/attach', { session: 'ses_nope' }),
      404,
      'not_found',
      'attach of an unknown session',
    );
  });

  it('path parameters: a name as long as the schema allows routes; past the router cap, a typed 414', async () => {
    const h = await startHttp(t);
    // 200 characters, each three bytes in UTF-8: 1,800 characters once percent-encoded.
    const name = 'ж'.repeat(100) + '€'.repeat(100);
    assert.equal((await h.api('POST', '/v1/streams', { name })).status, 200);
    const path = `/v1/streams/${encodeURIComponent(name)}/transcript`;
    const r = await h.api('GET', path);
    assert.equal(r.status, 200, JSON.stringify(r.json));
    assert.deepEqual(r.json.messages, []);
    const long = await refused(
      h,
      () => h.api('GET', `/v1/streams/${'x'.repeat(3000)}/transcript`),
      414,
      'invalid_input',
      'a path parameter past the cap',
    );
    assert.equal(long.json.error.details.maxChars, 2048);
    assert.match(long.json.error.requestId, /^req_/);
    await refused(
      h,
      () => h.api('GET', '/v1/sessions/%E0%A4%A'),
      400,
      'invalid_input',
      'bad percent-encoding',
    );
  });

  it('schema violations: 400 invalid_input with details.issues naming the field', async () => {
    const h = await startHttp(t);
    const issuesOf = (r: ApiResponse): Array<{ path: string; message: string }> => {
      assert.ok(Array.isArray(r.json.error.details?.issues), JSON.stringify(r.json));
      assert.ok(r.json.error.details.issues.length > 0);
      return r.json.error.details.issues;
    };
    // A bad enum.
    let r = await refused(
      h,
      () => h.api('POST', '/v1/sessions', { script: idleScript, pipe: 'sideways' }),
      400,
      'invalid_input',
      'bad enum',
    );
    assert.ok(issuesOf(r).some((i) => i.path === 'pipe'));
    assert.match(r.json.error.message, /ipc_spawn/);
    // A negative fd, in the path.
    r = await refused(
      h,
      () => h.api('POST', '/v1/fds/-1/write', { message: 'x' }),
      400,
      'invalid_input',
      'negative fd',
    );
    assert.ok(issuesOf(r).some((i) => i.path === 'fd'));
    // A fd that is not a number.
    r = await refused(h, () => h.api('POST', '/v1/fds/three/read', {}), 400, 'invalid_input', 'fd=three');
    assert.ok(issuesOf(r).some((i) => i.path === 'fd'));
    // Wrong types in the body.
    r = await refused(
      h,
      () => h.api('POST', '/v1/streams', { name: 42, selfEcho: 'very' }),
      400,
      'invalid_input',
      'wrong types',
    );
    const paths = issuesOf(r).map((i) => i.path);
    assert.ok(paths.includes('name'), paths.join(','));
    assert.ok(paths.includes('selfEcho'), paths.join(','));
    // Missing required fields, through /v1/syscalls.
    r = await refused(
      h,
      () => h.api('POST', '/v1/syscalls/streams_create', {}),
      400,
      'invalid_input',
      'missing name',
    );
    assert.ok(issuesOf(r).some((i) => i.path === 'name'));
    // Query parameters are validated too: a bad limit, a bad time, a bad seq.
    for (const q of ['limit=0', 'limit=-5', 'limit=abc', 'limit=100000', 'since=not-a-time', 'before=-1']) {
      r = await refused(h, () => h.api('GET', `/v1/events?${q}`), 400, 'invalid_input', `events?${q}`);
      issuesOf(r);
    }
    // A bad permission on attach; a w fd that is not detach (a kernel check, same code).
    await h.api('POST', '/v1/streams', { name: 'perm-room' });
    const a = (await h.api('POST', '/v1/sessions', { script: idleScript })).json.session.id;
    await waitStatus(h.warren, a, 'idle');
    r = await refused(
      h,
      () => h.api('POST', '/v1/streams/perm-room/attach', { session: a, permission: 'x' }),
      400,
      'invalid_input',
      'bad permission',
    );
    assert.ok(issuesOf(r).some((i) => i.path === 'permission'));
    await refused(
      h,
      () => h.api('POST', '/v1/streams/perm-room/attach', { session: a, permission: 'w', mode: 'async' }),
      400,
      'invalid_input',
      'w must be detach',
    );
    // A bad zone header.
    await refused(
      h,
      () => h.api('GET', '/v1/sessions', undefined, { headers: { 'x-warren-zone': 'Not A Zone!' } }),
      400,
      'invalid_input',
      'bad zone',
    );
  });

  it('reserved names: creating pipe:/lifecycle:/stdin:, attaching or closing plumbing: 409 reserved_name', async () => {
    const h = await startHttp(t);
    const spawned = (await h.api('POST', '/v1/sessions', { script: idleScript, pipe: 'async' })).json;
    const id: string = spawned.session.id;
    await waitStatus(h.warren, id, 'idle');
    for (const name of ['pipe:x', 'lifecycle:x', 'stdin:x', `pipe:${id}`]) {
      await refused(h, () => h.api('POST', '/v1/streams', { name }), 409, 'reserved_name', `create ${name}`);
      await refused(
        h,
        () => h.api('POST', '/v1/syscalls/ipc_create_stream', { name }),
        409,
        'reserved_name',
        `ipc_create_stream ${name}`,
      );
    }
    const internal = (await h.api('GET', '/v1/streams?internal=true')).json.streams as Array<{
      id: string;
      name: string;
      kind: string;
    }>;
    const lifecycle = internal.find((s) => s.name === `lifecycle:${id}`)!;
    const pipe = internal.find((s) => s.name === `pipe:${id}`)!;
    assert.ok(lifecycle && pipe);
    // By name (URL-encoded, the colon survives) and by id: the plumbing is not a room.
    for (const ref of [lifecycle.name, lifecycle.id, pipe.name, pipe.id, `stdin:${id}`]) {
      const path = `/v1/streams/${encodeURIComponent(ref)}`;
      await refused(
        h,
        () => h.api('POST', `${path}/attach`, { session: id }),
        409,
        'reserved_name',
        `attach ${ref}`,
      );
      await refused(
        h,
        () => h.api('POST', `${path}/detach`, { session: id }),
        409,
        'reserved_name',
        `detach ${ref}`,
      );
      await refused(h, () => h.api('DELETE', path), 409, 'reserved_name', `close ${ref}`);
      await refused(
        h,
        () => h.api('DELETE', `${path}?force=true`),
        409,
        'reserved_name',
        `force-close ${ref}`,
      );
    }
    // The session is untouched.
    const s = (await h.api('GET', `/v1/sessions/${id}`)).json.session;
    assert.equal(s.status, 'idle');
    const after = (await h.api('GET', '/v1/streams?internal=true')).json.streams;
    assert.equal(after.length, internal.length);
  });

  it('a name that is taken: 409 name_taken', async () => {
    const h = await startHttp(t);
    assert.equal((await h.api('POST', '/v1/streams', { name: 'dup' })).status, 200);
    await refused(h, () => h.api('POST', '/v1/streams', { name: 'dup' }), 409, 'name_taken', 'second create');
  });

  it('a spawn past a limit: 429 limit_exceeded, and nothing of it is written', async () => {
    const h = await startHttp(t, {
      kernel: { limits: { maxDepth: 10, maxChildren: 10, maxSessionsPerZone: 2 } },
    });
    for (let i = 0; i < 2; i++) {
      const r = await h.api('POST', '/v1/sessions', { script: idleScript, title: `ok${i}` });
      assert.equal(r.status, 200, JSON.stringify(r.json));
      await waitStatus(h.warren, r.json.session.id, 'idle');
    }
    const sessionsBefore = (await h.api('GET', '/v1/sessions?all=true')).json.sessions.length;
    const r = await refused(
      h,
      () => h.api('POST', '/v1/sessions', { script: idleScript, title: 'too many' }),
      429,
      'limit_exceeded',
      'a third session in a zone limited to two',
    );
    assert.equal(r.json.error.details?.limit, 'maxSessionsPerZone');
    const after = (await h.api('GET', '/v1/sessions?all=true')).json.sessions;
    assert.equal(after.length, sessionsBefore);
    assert.ok(!after.some((s: { title: string }) => s.title === 'too many'));
    // Through /v1/syscalls too.
    await refused(
      h,
      () => h.api('POST', '/v1/syscalls/ipc_spawn', { script: idleScript }),
      429,
      'limit_exceeded',
      'ipc_spawn via /v1/syscalls',
    );
  });

  it('a spawn with an unknown runtime or a missing executable: 422 runtime_unavailable, nothing written', async () => {
    const h = await startHttp(t);
    let r = await refused(
      h,
      () => h.api('POST', '/v1/sessions', { runtime: 'warp-drive' }),
      422,
      'runtime_unavailable',
      'unknown runtime',
    );
    assert.match(r.json.error.message, /warp-drive/);
    r = await refused(
      h,
      () =>
        h.api('POST', '/v1/sessions', { runtime: 'command', command: 'warren-no-such-binary-xyz --flag' }),
      422,
      'runtime_unavailable',
      'missing executable',
    );
    assert.match(r.json.error.message, /warren-no-such-binary-xyz/);
  });

  it('close with undelivered messages: 409 undelivered_messages; force closes and says so', async () => {
    const h = await startHttp(t);
    const room = (await h.api('POST', '/v1/streams', { name: 'busy' })).json;
    const a = (await h.api('POST', '/v1/sessions', { script: idleScript, title: 'talker' })).json.session.id;
    await waitStatus(h.warren, a, 'idle');
    // Attached detach: nothing is pushed to it, so what the operator writes stays due for it.
    const att = await h.api('POST', '/v1/streams/busy/attach', { session: a, mode: 'detach' });
    assert.equal(att.status, 200, JSON.stringify(att.json));
    const token = h.tokenOf(a);
    // The session writes: due for the operator's fd.
    const w1 = await h.api(
      'POST',
      `/v1/fds/${att.json.fd}/write`,
      { message: 'from the agent' },
      { auth: token },
    );
    assert.equal(w1.status, 200, JSON.stringify(w1.json));
    // The operator writes: due for the session's fd.
    await h.api('POST', `/v1/fds/${room.fd}/write`, { message: 'from the operator' });
    await h.warren.store.writer.drained();

    let r = await refused(
      h,
      () => h.api('POST', `/v1/fds/${room.fd}/close`, {}),
      409,
      'undelivered_messages',
      'operator closes its fd',
    );
    assert.equal(r.json.error.details?.undelivered, 1);
    r = await refused(
      h,
      () => h.api('POST', `/v1/fds/${att.json.fd}/close`, {}, { auth: token }),
      409,
      'undelivered_messages',
      'the session closes its fd',
    );
    r = await refused(
      h,
      () => h.api('DELETE', '/v1/streams/busy'),
      409,
      'undelivered_messages',
      'close room',
    );
    // Reading clears it for the operator; the room still refuses for the session's sake.
    const read = (await h.api('POST', `/v1/fds/${room.fd}/read`, {})).json;
    assert.deepEqual(
      read.messages.map((m: { text: string }) => m.text),
      ['from the agent'],
    );
    await refused(h, () => h.api('DELETE', '/v1/streams/busy'), 409, 'undelivered_messages', 'still due');
    // Force: closed, evicted, and the log says it was forced.
    const forced = await h.api('DELETE', '/v1/streams/busy?force=true');
    assert.equal(forced.status, 200, JSON.stringify(forced.json));
    assert.ok(forced.json.evicted.includes(a));
    const closes = (await h.api('GET', '/v1/events?type=fd.closed&limit=50')).json.events;
    assert.deepEqual(
      closes.map((e: { payload: { holder: string } }) => e.payload.holder).sort(),
      [a, 'operator:admin'].sort(),
    );
    assert.equal((await h.api('GET', '/v1/streams')).json.streams.length, 0);
    // The session had other fds, so it lives on.
    await until(async () => (await h.api('GET', `/v1/sessions/${a}`)).json.session.status === 'idle');
  });

  it('signalling init, or a stopped session: typed errors, nothing written', async () => {
    const h = await startHttp(t);
    const all = (await h.api('GET', '/v1/sessions')).json.sessions as Array<{ id: string; depth: number }>;
    const init = all.find((s) => s.depth === 0)!;
    assert.ok(init);
    await refused(h, () => h.api('POST', `/v1/sessions/${init.id}/kill`, {}), 403, 'forbidden', 'kill init');
    const a = (await h.api('POST', '/v1/sessions', { script: idleScript })).json.session.id;
    await waitStatus(h.warren, a, 'idle');
    await h.api('POST', `/v1/sessions/${a}/kill`, {});
    await waitStatus(h.warren, a, 'stopped');
    await h.warren.store.writer.drained();
    const r = await refused(
      h,
      () => h.api('POST', `/v1/sessions/${a}/send`, { text: 'anyone?' }),
      409,
      'session_stopped',
      'send to a stopped session',
    );
    assert.match(r.json.error.message, /has stopped \(killed\)/);
  });
});
