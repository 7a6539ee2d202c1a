/**
 * A browser's login over real HTTP, on both backends: an operator key or a one-time login
 * token opens a cookie session that stands for that operator; a key that is wrong or revoked
 * opens none; a revoked key ends the browser sessions it opened (the cookie is refused and
 * forgotten); a login token works once; logout ends the session.
 */
import assert from 'node:assert/strict';
import { it } from 'node:test';
import { type HttpWarren, startHttp } from '../helpers/http.ts';
import { call, forEachWarren } from '../helpers/warrens.ts';

// biome-ignore lint/suspicious/noExplicitAny: response bodies are checked field by field
type Any = any;

/** POST /v1/ui/login from the server's own page; the cookie it sets ("warren_session=…"), if any. */
async function login(
  h: HttpWarren,
  body: unknown,
): Promise<{ status: number; json: Any; cookie: string | null }> {
  const res = await fetch(`${h.url}/v1/ui/login`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', origin: h.url },
    body: JSON.stringify(body),
    signal: AbortSignal.timeout(30_000),
  });
  const setCookie = res.headers.get('set-cookie');
  return { status: res.status, json: await res.json(), cookie: setCookie ? setCookie.split(';')[0]! : null };
}

/** GET /v1/ui/me with only the cookie: who it stands for, or the refusal. */
async function me(h: HttpWarren, cookie: string): Promise<{ status: number; json: Any }> {
  const res = await fetch(`${h.url}/v1/ui/me`, { headers: { cookie }, signal: AbortSignal.timeout(30_000) });
  return { status: res.status, json: await res.json() };
}

forEachWarren('browser login', (t) => {
  it('a key opens a cookie session for its operator; a wrong key opens none', async () => {
    const h = await startHttp(t);
    const ok = await login(h, { key: h.key });
    assert.equal(ok.status, 200);
    assert.equal(ok.json.operator, 'admin');
    assert.ok(ok.cookie?.startsWith('warren_session=wcs_'), String(ok.cookie));
    assert.deepEqual((await me(h, ok.cookie!)).json, { operator: 'admin', zone: 'default' });
    // The cookie stands for the operator on the API too.
    const res = await fetch(`${h.url}/v1/sessions`, { headers: { cookie: ok.cookie! } });
    assert.equal(res.status, 200);

    const wrong = await login(h, { key: `wk_${'x'.repeat(43)}` });
    assert.equal(wrong.status, 401);
    assert.equal(wrong.json.error.code, 'unauthenticated');
    assert.equal(wrong.cookie, null);
    assert.equal((await me(h, 'warren_session=wcs_forged')).status, 401);
  });

  it('a revoked key ends the browser sessions it opened, and opens no new one', async () => {
    const h = await startHttp(t);
    const ops = await call(h.warren, 'key_create', { name: 'ops' });
    const session = await login(h, { key: ops.key });
    assert.equal(session.status, 200);
    assert.equal((await me(h, session.cookie!)).json.operator, 'ops');
    await call(h.warren, 'key_revoke', { id: ops.id });

    const refused = await me(h, session.cookie!);
    assert.equal(refused.status, 401);
    assert.match(refused.json.error.message, /operator ops holds no key any more/);
    // Refused once, forgotten: the row is gone, not only refused while the key is revoked.
    assert.match((await me(h, session.cookie!)).json.error.message, /the browser session has ended/);
    const again = await login(h, { key: ops.key });
    assert.equal(again.status, 401);
    assert.equal(again.cookie, null);
    // The admin's own browser session is not touched.
    const admin = await login(h, { key: h.key });
    assert.equal((await me(h, admin.cookie!)).json.operator, 'admin');
  });

  it('a login token opens one session, once; logout ends it', async () => {
    const h = await startHttp(t);
    const token = await h.warren.browser.loginToken();
    assert.ok(token?.startsWith('wlt_'));
    const first = await login(h, { token });
    assert.equal(first.status, 200);
    assert.equal(first.json.operator, 'admin');
    const second = await login(h, { token });
    assert.equal(second.status, 401);
    assert.match(second.json.error.message, /already used or has expired/);

    const out = await fetch(`${h.url}/v1/ui/logout`, {
      method: 'POST',
      headers: { cookie: first.cookie!, origin: h.url },
    });
    assert.equal(out.status, 200);
    assert.equal((await me(h, first.cookie!)).status, 401);
  });
});
