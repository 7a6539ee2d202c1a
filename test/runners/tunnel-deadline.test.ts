/**
 * Every tunnelled request carries a deadline (issue 26, "Runners"): the agent's own
 * (`x-warren-deadline`), or, when it gives none, TUNNEL_DEADLINE_MS from when the runner read
 * it — so the server never executes a request held past that (its server paused, the wire
 * stalled). The server's side of it (an expired request answered 504, not executed) is
 * deadlines.test.ts.
 */
import assert from 'node:assert/strict';
import { after, it } from 'node:test';
import { TunnelProxy } from '../../src/plugins/runners/runner/proxy.ts';
import { DEADLINE_HEADER, expired, TUNNEL_DEADLINE_MS } from '../../src/plugins/runners/wire.ts';

const opened: Array<{ path: string; deadline: number }> = [];
const proxy = new TunnelProxy({
  up: () => true,
  open: (req) => {
    opened.push({ path: req.path, deadline: req.deadline });
    // Answered at once: what reaches the wire is all this test looks at.
    queueMicrotask(() => {
      proxy.head(opened.length, 200, {});
      proxy.end(opened.length);
    });
    return opened.length;
  },
  abort() {},
});

after(() => proxy.close());

it('a request without a deadline header gets the default one; with one, its own', async () => {
  await proxy.listen();
  const before = Date.now();
  await fetch(`${proxy.url()}/v1/none`, { method: 'POST', body: '{}' });
  const after = Date.now();
  const own = after + 5000;
  await fetch(`${proxy.url()}/v1/own`, {
    method: 'POST',
    body: '{}',
    headers: { [DEADLINE_HEADER]: String(own) },
  });

  const none = opened.find((o) => o.path === '/v1/none')!;
  assert.ok(
    none.deadline >= before + TUNNEL_DEADLINE_MS && none.deadline <= after + TUNNEL_DEADLINE_MS,
    `a default deadline (${none.deadline - before} ms after the request)`,
  );
  assert.equal(expired(none, after), false);
  assert.equal(expired(none, after + TUNNEL_DEADLINE_MS + 1), true, 'refused once it has passed');
  assert.equal(opened.find((o) => o.path === '/v1/own')!.deadline, own);
});
