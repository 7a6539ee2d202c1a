import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { existsSync, readFileSync, rmSync, statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { it } from 'node:test';
import { sql } from 'kysely';
import { SECRET_FILE } from '../../src/auth/secret.ts';
import { TokenSigner } from '../../src/auth/tokens.ts';
import { request, startHttp } from '../helpers/http.ts';
import { forEachWarren, idleScript, waitStatus } from '../helpers/warrens.ts';

forEachWarren('session tokens and the one authentication path', (t) => {
  it('a request without credentials is refused with 401 before its body is read', async () => {
    const h = await startHttp(t);
    for (const [what, headers, raw] of [
      ['text/plain', { 'content-type': 'text/plain' }, 'hello'],
      ['malformed JSON', {}, '{"name":'],
      ['nested 5,000 deep', {}, `${'['.repeat(5000)}${']'.repeat(5000)}`],
    ] as const) {
      const r = await h.api('POST', '/v1/streams', undefined, { auth: null, headers: { ...headers }, raw });
      assert.equal(r.status, 401, `${what}: ${JSON.stringify(r.json)}`);
      assert.equal(r.json.error.code, 'unauthenticated', what);
    }
    // MCP takes the same path.
    const mcp = await request(h.url, 'POST', '/mcp', undefined, { raw: '{"jsonrpc":' });
    assert.equal(mcp.status, 401);
  });

  it('a token signed with another secret is refused', async () => {
    const h = await startHttp(t);
    const a = await h.api('POST', '/v1/sessions', { script: idleScript });
    const id = a.json.session.id;
    const forged = new TokenSigner(randomBytes(32)).mint(id, 0);
    const r = await h.api('POST', '/v1/syscalls/ipc_list_fds', {}, { auth: forged });
    assert.equal(r.status, 401);
    assert.equal(r.json.error.code, 'unauthenticated');
    assert.equal((await h.api('POST', '/v1/syscalls/ipc_list_fds', {}, { auth: h.tokenOf(id) })).status, 200);
  });

  it('a well-signed token of a session that does not exist is refused', async () => {
    const h = await startHttp(t);
    // Signed with this warren's own secret: only the session row can refuse it.
    const r = await h.api('POST', '/v1/syscalls/ipc_list_fds', {}, { auth: h.tokenOf('ses_nobody', 0) });
    assert.equal(r.status, 401, JSON.stringify(r.json));
    assert.equal(r.json.error.code, 'unauthenticated');
    assert.match(r.json.error.message, /invalid session token/);
  });

  it('a token of an older generation is refused once the session’s generation moves on', async () => {
    const h = await startHttp(t);
    const a = await h.api('POST', '/v1/sessions', { script: idleScript });
    const id = a.json.session.id;
    await waitStatus(h.warren, id, 'idle');
    const old = h.tokenOf(id, 0);
    assert.equal((await h.api('POST', '/v1/syscalls/ipc_list_fds', {}, { auth: old })).status, 200);
    // What a resume does: the orphaned process still holds generation 0.
    await h.warren.store.writer.write(async (tx) => {
      await sql`update sessions set token_gen = token_gen + 1 where id = ${id}`.execute(tx.db);
    });
    const refused = await h.api('POST', '/v1/syscalls/ipc_list_fds', {}, { auth: old });
    assert.equal(refused.status, 401);
    assert.match(refused.json.error.message, /replaced/);
    assert.equal(
      (await h.api('POST', '/v1/syscalls/ipc_list_fds', {}, { auth: h.tokenOf(id, 1) })).status,
      200,
    );
    // A generation nobody minted is as bad as a forged MAC.
    assert.equal(
      (await h.api('POST', '/v1/syscalls/ipc_list_fds', {}, { auth: h.tokenOf(id, 2) })).status,
      401,
    );
  });
});

forEachWarren(
  'the token secret (SQLite)',
  (t) => {
    it('lives in <dir>/secret (0600), not in the database file', async () => {
      const location = t.location();
      const w = await t.open({ location });
      const file = join(dirname(location.url), SECRET_FILE);
      const secret = readFileSync(file);
      assert.equal(secret.length, 32);
      assert.equal(statSync(file).mode & 0o777, 0o600);
      const row = await w.store.reader
        .selectFrom('settings')
        .selectAll()
        .where('key', '=', 'kernel_secret')
        .execute();
      assert.deepEqual(row, []);
      await w.close();
      for (const f of [location.url, `${location.url}-wal`]) {
        if (!existsSync(f)) continue;
        const bytes = readFileSync(f);
        for (const form of [
          secret,
          Buffer.from(secret.toString('base64url')),
          Buffer.from(secret.toString('hex')),
        ])
          assert.equal(bytes.indexOf(form), -1, `${f} holds the secret`);
      }
    });

    it('a secret an older version kept in settings moves into the file; its row is deleted', async () => {
      const location = t.location();
      const first = await t.open({ location });
      const legacy = randomBytes(32).toString('base64url');
      await first.store.writer.write(async (tx) => {
        await tx.db.insertInto('settings').values({ key: 'kernel_secret', value: legacy }).execute();
      });
      await first.close();
      const file = join(dirname(location.url), SECRET_FILE);
      rmSync(file);
      const second = await t.open({ location });
      assert.equal(readFileSync(file, 'utf8'), legacy);
      assert.equal(statSync(file).mode & 0o777, 0o600);
      const rows = await second.store.reader
        .selectFrom('settings')
        .selectAll()
        .where('key', '=', 'kernel_secret')
        .execute();
      assert.deepEqual(rows, []);
      // Tokens are signed with it: the same secret read back verifies what the warren mints.
      const probe = second.tokens.mint('ses_probe', 0);
      assert.deepEqual(new TokenSigner(Buffer.from(legacy, 'utf8')).verify(probe), {
        sessionId: 'ses_probe',
        gen: 0,
      });
    });
  },
  ['sqlite'],
);

it('a token secret shorter than 16 bytes is refused; 16 bytes sign and verify', () => {
  assert.throws(() => new TokenSigner(randomBytes(15)), /at least 16 bytes/);
  const signer = new TokenSigner(randomBytes(16));
  assert.deepEqual(signer.verify(signer.mint('ses_a', 3)), { sessionId: 'ses_a', gen: 3 });
});
