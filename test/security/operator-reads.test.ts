import assert from 'node:assert/strict';
import { it } from 'node:test';
import { startHttp } from '../helpers/http.ts';
import { deepTrees, forEachWarren, idleScript, waitStatus } from '../helpers/warrens.ts';

/**
 * The read matrix's operator row (docs/security.md): an operator reads every stream of its
 * zone, not only those it holds an fd on. A mutation run (docs/testing.md) found that
 * dropping the operator's case from `canReadStream` passed the read tests: they read as
 * sessions, and as operators only streams the operator holds.
 */
forEachWarren('an operator reads every stream of its zone', (t) => {
  it("reads the transcript of a grandchild's pipe, which it holds no fd on", async () => {
    const h = await startHttp(t, { gating: deepTrees });
    const a = await h.api('POST', '/v1/sessions', { script: idleScript });
    assert.equal(a.status, 200, JSON.stringify(a.json));
    await waitStatus(h.warren, a.json.session.id, 'idle');
    // A spawns B: B's pipe is held by A and B, not by the operator.
    const b = await h.api(
      'POST',
      '/v1/sessions',
      { script: { steps: [{ reply: 'from b' }, { listen: {} }] } },
      {
        auth: h.tokenOf(a.json.session.id),
      },
    );
    assert.equal(b.status, 200, JSON.stringify(b.json));
    const pipe = `pipe:${b.json.session.id}`;
    await waitStatus(h.warren, b.json.session.id, 'idle');
    const fds = await h.api('GET', '/v1/fds');
    assert.equal(fds.status, 200, JSON.stringify(fds.json));
    assert.ok(
      !JSON.stringify(fds.json).includes(pipe),
      `the operator holds no fd on ${pipe}: ${JSON.stringify(fds.json)}`,
    );
    const r = await h.api('GET', `/v1/streams/${encodeURIComponent(pipe)}/transcript`);
    assert.equal(r.status, 200, JSON.stringify(r.json));
    assert.deepEqual(
      r.json.messages.map((m: { text: string }) => m.text),
      ['from b'],
    );
  });
});
