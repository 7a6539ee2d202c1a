import assert from 'node:assert/strict';
import { it } from 'node:test';
import { type HttpWarren, startHttp } from '../helpers/http.ts';
import { deepTrees, forEachWarren, idleScript, waitStatus } from '../helpers/warrens.ts';

/**
 * The read matrix, as the attack: a session at depth 2 (the viewer) reads, with its own
 * token over REST, every session around it — itself, its child and grandchild, its parent,
 * its sibling and a session of another zone — through every read syscall. It sees its
 * subtree and nothing else; above all not the operator's private message to its sibling.
 */

const PRIVATE = 'for-the-sibling-only: the launch code is 0000';

type Who = 'self' | 'child' | 'grandchild' | 'parent' | 'sibling' | 'otherZone';
const SEES: Record<Who, boolean> = {
  self: true,
  child: true,
  grandchild: true,
  parent: false,
  sibling: false,
  otherZone: false,
};

/** The groups whose reads the matrix tries (not in a session's default set). */
const READS = ['sessions', 'events', 'streams'];

async function spawnAs(h: HttpWarren, auth: string, title: string, zone?: string): Promise<string> {
  const r = await h.api(
    'POST',
    '/v1/sessions',
    { script: idleScript, title, toolGroups: READS },
    { auth, ...(zone ? { headers: { 'x-warren-zone': zone } } : {}) },
  );
  assert.equal(r.status, 200, `spawn ${title}: ${JSON.stringify(r.json)}`);
  return r.json.session.id;
}

forEachWarren('the read matrix', (t) => {
  it('a session reads itself, its descendants and their plumbing; never its parent, sibling or another zone', async () => {
    const h = await startHttp(t, { gating: deepTrees });
    const parent = await spawnAs(h, h.key, 'parent');
    const self = await spawnAs(h, h.tokenOf(parent), 'viewer');
    const sibling = await spawnAs(h, h.tokenOf(parent), 'sibling');
    const child = await spawnAs(h, h.tokenOf(self), 'child');
    const grandchild = await spawnAs(h, h.tokenOf(child), 'grandchild');
    const otherZone = await spawnAs(h, h.key, 'elsewhere', 'other');
    const ids: Record<Who, string> = { self, child, grandchild, parent, sibling, otherZone };
    for (const id of [parent, self, sibling, child, grandchild]) await waitStatus(h.warren, id, 'idle');
    const sent = await h.api('POST', `/v1/sessions/${sibling}/send`, { text: PRIVATE });
    assert.equal(sent.status, 200);

    const token = h.tokenOf(self);
    const reads: Array<[string, (id: string) => Promise<{ status: number; json: unknown }>]> = [
      ['session_show', (id) => h.api('GET', `/v1/sessions/${id}`, undefined, { auth: token })],
      [
        'session_events',
        (id) => h.api('GET', `/v1/sessions/${id}/events?limit=1000`, undefined, { auth: token }),
      ],
      ['ipc_wait', (id) => h.api('POST', '/v1/sessions/wait', { session: id, waitMs: 0 }, { auth: token })],
      [
        'stdin transcript',
        (id) => h.api('GET', `/v1/streams/stdin:${id}/transcript`, undefined, { auth: token }),
      ],
      [
        'pipe transcript',
        (id) => h.api('GET', `/v1/streams/pipe:${id}/transcript`, undefined, { auth: token }),
      ],
    ];
    const wrong: string[] = [];
    for (const [read, fn] of reads) {
      for (const who of Object.keys(ids) as Who[]) {
        const r = await fn(ids[who]);
        const body = JSON.stringify(r.json);
        if (body.includes(PRIVATE)) wrong.push(`${read} on ${who} leaked the private message`);
        const ok = r.status === 200;
        if (ok !== SEES[who]) wrong.push(`${read} on ${who}: ${r.status} ${body.slice(0, 160)}`);
        // Refused reads say why without echoing anything of the target.
        if (!ok && who !== 'otherZone' && r.status !== 403)
          wrong.push(`${read} on ${who}: ${r.status}, want 403`);
        if (!ok && who === 'otherZone' && r.status !== 404)
          wrong.push(`${read} on ${who}: ${r.status}, want 404`);
      }
    }
    // ps lists what it may read, and only that.
    const ps = await h.api('GET', '/v1/sessions?all=true', undefined, { auth: token });
    assert.equal(ps.status, 200);
    for (const s of ps.json.sessions as Array<{ id: string }>) {
      if (![self, child, grandchild].includes(s.id)) wrong.push(`ps listed ${s.id}`);
    }
    assert.deepEqual(wrong, []);

    // The operator still reads everything in its zone, the private message included.
    const opView = await h.api('GET', `/v1/sessions/${sibling}/events?limit=1000`);
    assert.equal(opView.status, 200);
    assert.ok(JSON.stringify(opView.json).includes(PRIVATE));
  });

  it('a room member that left reads no further; a member reads the room', async () => {
    const h = await startHttp(t, { gating: deepTrees });
    const a = await spawnAs(h, h.key, 'member');
    await waitStatus(h.warren, a, 'idle');
    const room = await h.api('POST', '/v1/streams', { name: 'ops-room' });
    assert.equal(room.status, 200);
    assert.equal((await h.api('POST', '/v1/streams/ops-room/attach', { session: a })).status, 200);
    const tok = h.tokenOf(a);
    assert.equal(
      (await h.api('GET', '/v1/streams/ops-room/transcript', undefined, { auth: tok })).status,
      200,
    );
    assert.equal((await h.api('POST', '/v1/streams/ops-room/detach', { session: a })).status, 200);
    await h.api('POST', `/v1/fds/${room.json.fd}/write`, { message: 'after you left' });
    const r = await h.api('GET', '/v1/streams/ops-room/transcript', undefined, { auth: tok });
    assert.equal(r.status, 403);
    assert.ok(!JSON.stringify(r.json).includes('after you left'));
  });
});
